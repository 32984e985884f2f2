//! What `ttprof capture` does, as a library: attach to live device memory (the emulator's
//! device image, or a card), drain the rings while kernels run, and write what was captured
//! when told to stop.
//!
//! [`Attached::open`] checks the inputs and opens the device (a snapshot is refused: a
//! capture needs live memory); [`Attached::capture`] drains until its [`StopWhen`] (or
//! [`CaptureOptions::interrupt`]), keeping what it drained in a spool file
//! ([`crate::capture`]); [`Drained::write`] names the zones from the op log and writes the
//! outputs ring by ring from the spool (memory: one ring's records): the device CSV, the
//! Perfetto trace and the Parquet tables, or with [`CaptureOptions::all_outputs`] every
//! output `ttprof report` writes; [`CaptureOutcome::write_summary`] adds [`SUMMARY_FILE`] with
//! the capture's counts. With [`CaptureOptions::sample`], every poll also drives the tiles'
//! debug daisychains ([`crate::lines::sample::LiveSampler`]) and `write` adds the sampled
//! line profile, named from the op log.
//!
//! A capture consumes the rings (it moves their `TAIL`), so what it drained is nowhere else
//! afterwards: an op log that cannot be read, or that does not fit the run, still leaves the
//! CSV, Perfetto trace and Parquet tables written ([`CaptureEvent::AllOutputsFailed`]);
//! outputs that cannot be written at all are an [`Error::CaptureLost`].

mod summary;
mod write;

use crate::atomic;
use crate::capture::{self, capture_sampled, Captured, Interrupt, Pacing, StopWhen, Stopped};
use crate::clock::{self, ClockSampler};
use crate::csv::{self as device_csv, CsvWritten};
use crate::devmem::{self, DeviceClock, DeviceMemory, FileKind, LiveDevice, MappedImage};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::issue::Issue;
use crate::lines::sample::{LiveCounts, LiveSampler, SampleConfig};
use crate::oplog::OpLog;
use crate::outputs::Dataset;
use riscv_linker::devfile;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Name of the summary file.
pub const SUMMARY_FILE: &str = "capture.json";

/// What `ttprof capture` is asked (numbers checked already).
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// Live device memory: the device image of a running emulator, or a card.
    pub device: PathBuf,
    /// The op log the host program writes, read when the capture ends (`None`: the zones
    /// are written unnamed, as `unresolved-site-<id>`).
    pub oplog: Option<PathBuf>,
    /// Directory for the output files (created if missing).
    pub out: PathBuf,
    /// When the capture ends.
    pub stop: StopWhen,
    /// Ends the capture too when raised (the command line raises it on Ctrl-C).
    pub interrupt: Interrupt,
    /// Longest pause between polls while the rings are idle.
    pub idle_poll: Duration,
    /// Also write every other output `ttprof report` writes (needs `oplog`).
    pub all_outputs: bool,
    /// With `all_outputs`: a snapshot of clock sync samples to put device times on the host
    /// clock (nominal clock otherwise).
    pub clock: Option<PathBuf>,
    /// Take a clock sync sample of one tile per chip every this many µs while draining (0:
    /// none).
    pub sample_every_us: u64,
    /// With `all_outputs`: summary rows whose mean zone is shorter than this (ns) are hidden.
    pub threshold_ns: f64,
    /// Where the spool file lives (`None`: `out`).
    pub spool_dir: Option<PathBuf>,
    /// Also add the capture to this hive-partitioned Parquet dataset.
    pub dataset: Option<Dataset>,
    /// Also sample the line profile through every tile's debug daisychain while draining
    /// ([`crate::lines::sample::LiveSampler`]; needs `oplog` to name the kernels; on a card
    /// the buffer must be L1 no kernel uses): the `ttprof_samples.*` files.
    pub sample: Option<SampleConfig>,
    /// The command's input guard: the files read are noted in it and no output is written
    /// over one of them (the command line passes one; [`Inputs::none`]: no guard).
    pub inputs: Inputs,
}

/// A device opened for a capture that has not started yet.
pub struct Attached {
    options: CaptureOptions,
    live: Box<dyn LiveDevice>,
    idle_note: Option<String>,
}

/// A capture that has ended, its records in the spool, its outputs not written yet.
pub struct Drained {
    options: CaptureOptions,
    live: Box<dyn LiveDevice>,
    sampler: ClockSampler,
    captured: Captured,
    /// With `sample`: the daisychain samples, and the error that stopped the sampling.
    samples: Option<(LiveSampler, Option<Error>)>,
}

/// What [`Drained::write`] reports while it writes.
#[derive(Debug)]
pub enum CaptureEvent<'a> {
    /// Rings written so far of the streamed outputs, and how many there are.
    Rings {
        /// Rings written.
        written: u64,
        /// Rings in all.
        of: u64,
    },
    /// `all_outputs` could not be written (say, the op log does not fit the run yet): the
    /// streamed outputs are written instead, and an error issue says so.
    AllOutputsFailed(&'a Error),
}

/// What a written capture leaves.
pub struct CaptureOutcome {
    /// The capture: its counts per ring, the readout's issues, why it stopped.
    pub captured: Captured,
    /// What was written: zones, records, rows, names resolved, and every problem.
    pub written: CsvWritten,
    /// With `all_outputs`: the per-op summary, rendered.
    pub summary: Option<String>,
    /// Which clock the times are on.
    pub clock_note: String,
    /// Every output file written, but the CSV and the summary file.
    pub files: Vec<PathBuf>,
    /// The device CSV.
    pub csv: PathBuf,
    /// With `sample`: how many windows were taken, dropped and left unfinished.
    pub samples: Option<LiveCounts>,
    /// The output directory.
    out: PathBuf,
    /// The device, as its memory describes itself.
    device: String,
    /// The command's input guard ([`CaptureOptions::inputs`]).
    inputs: Inputs,
}

impl Attached {
    /// Checks the inputs (the device is live memory, the stop condition can be waited for,
    /// `clock` is a snapshot), creates the output directory and opens the device.
    pub fn open(options: CaptureOptions) -> Result<Attached> {
        let card = devmem::is_card(&options.device);
        if !card && devmem::file_kind(&options.device, &options.inputs)? == FileKind::Snapshot {
            return Err(Error::BadFile {
                path: options.device.clone(),
                what: "is a snapshot (a recording): capture needs live device memory (the emulator's device image)".into(),
            });
        }
        options.stop.check()?;
        if let Some(s) = &options.sample {
            s.check().map_err(|what| Error::Argument { what })?;
            if options.oplog.is_none() {
                return Err(Error::Argument {
                    what: "--sample needs --oplog: the samples are pcs, named from the kernel ELFs the op log lists"
                        .into(),
                });
            }
        }
        if let Some(path) = &options.clock {
            // Read again when the capture ends (it may get its second sync window meanwhile).
            if devmem::file_kind(path, &options.inputs)? != FileKind::Snapshot {
                return Err(Error::BadFile {
                    path: path.clone(),
                    what:
                        "is not a snapshot: --clock takes the file `ttprof clock --record` writes"
                            .into(),
                });
            }
        }
        std::fs::create_dir_all(&options.out)
            .map_err(|e| Error::io(&options.out, "create output directory", e))?;
        let live = devmem::open_live(&options.device, &options.inputs)?;
        if let Some(s) = &options.sample {
            // One sampler per device: a second would arm and read the first's windows.
            live.claim_sampler()?;
            live.allow_l1_writes(
                s.buffer.addr,
                s.buffer.count * riscv_linker::mmio::daisychain::SAMPLE_BYTES,
            )?;
        }
        let idle_note = if card {
            None
        } else {
            idle_note(&MappedImage::open_read_only(
                &options.device,
                &options.inputs,
            )?)
        };
        Ok(Attached {
            options,
            live,
            idle_note,
        })
    }

    /// A note when nothing is running on the device image (no kernel runs, no emulator
    /// answers its clock mailbox): the capture reads what is already in the rings.
    pub fn idle_note(&self) -> Option<&str> {
        self.idle_note.as_deref()
    }

    /// The device, as its memory describes itself.
    pub fn describe(&self) -> String {
        self.live.describe()
    }

    /// Drains the rings until the stop condition (or an interrupt); `progress` sees the
    /// figures after each drain.
    pub fn capture(self, progress: impl FnMut(&capture::Progress)) -> Result<Drained> {
        let Attached { options, live, .. } = self;
        let mem: &dyn DeviceMemory = &*live;
        let mut pacing = Pacing {
            idle: options.idle_poll,
            ..Pacing::default()
        };
        let mut daisy = options
            .sample
            .map(|cfg| LiveSampler::new(cfg, mem))
            .transpose()?;
        if daisy.is_some() {
            // A window fills in a few thousand cycles: look often.
            pacing.idle = pacing.idle.min(SAMPLE_POLL);
        }
        let mut sample_error = None;
        let mut progress = progress;
        let mut sampler = ClockSampler::new(
            &clock::all_tiles(mem),
            options.sample_every_us.saturating_mul(1000),
        );
        let clock_source: &dyn DeviceClock = &*live;
        let sampling = options.sample_every_us > 0;
        let spool_dir = options.spool_dir.as_deref().unwrap_or(&options.out);
        let captured = capture_sampled(
            mem,
            &options.stop,
            &options.interrupt,
            pacing,
            spool_dir,
            |ns| {
                if sampling {
                    sampler.tick(clock_source, ns);
                }
            },
            |p| {
                if let (Some(d), None) = (daisy.as_mut(), &sample_error) {
                    sample_error = d.poll(mem).err();
                }
                progress(p)
            },
        )?;
        let samples = daisy.map(|mut d| {
            d.finish();
            (d, sample_error)
        });
        Ok(Drained {
            options,
            live,
            sampler,
            captured,
            samples,
        })
    }
}

impl Drained {
    /// The capture: why it stopped, how long it ran, its counts.
    pub fn captured(&self) -> &Captured {
        &self.captured
    }

    /// Reads the op log and writes the outputs and [`SUMMARY_FILE`]; `event` hears of the
    /// rings written and of an `all_outputs` that could not be written.
    pub fn write(self, event: &mut dyn FnMut(CaptureEvent)) -> Result<CaptureOutcome> {
        let Drained {
            options,
            live,
            sampler,
            mut captured,
            samples,
        } = self;
        let (oplog, oplog_issue) = read_oplog(
            options.oplog.as_deref(),
            options.all_outputs,
            &options.inputs,
        );
        let csv_path = options.out.join(device_csv::FILE_NAME);
        // Once the outputs cannot be written at all, say what is lost (the rings were freed).
        let zones = captured.zones;
        let shared_disk = options.spool_dir.is_none() && captured.stopped == Stopped::Failed;
        let lost = |e: Error| Error::CaptureLost {
            source: Box::new(e),
            zones,
            shared_disk,
        };
        let in_run = sampler.samples();
        let streamed = |captured: &mut Captured,
                        oplog: Option<&OpLog>,
                        event: &mut dyn FnMut(CaptureEvent)| {
            write::streamed(
                &options,
                &csv_path,
                captured,
                oplog,
                in_run,
                options.dataset.clone(),
                event,
            )
            .map_err(lost)
        };
        let written = match (&oplog, options.all_outputs) {
            (Some(oplog), true) => {
                match write::all_outputs(&options, &mut captured, oplog, in_run) {
                    Ok(w) => w,
                    // The rings were consumed: what `report` would write cannot be (the op
                    // log does not fit the run yet, say), so write what a capture writes
                    // without --all-outputs, and say why.
                    Err(e) => {
                        for r in &mut captured.readout.rings {
                            r.records = Default::default();
                        }
                        event(CaptureEvent::AllOutputsFailed(&e));
                        let mut w = streamed(&mut captured, Some(oplog), event)?;
                        let what = format!(
                            "--all-outputs: {e}: the op report, trace, timeline and summary are not written; the {} captured \
                             zone(s) are in {}, the Perfetto trace and the Parquet tables (named where the op log names their \
                             run): the rings were consumed, so keep this output",
                            w.written.zones,
                            csv_path.display()
                        );
                        w.written
                            .issues
                            .push(Issue::error(None, what).with_count(w.written.zones));
                        w
                    }
                }
            }
            _ => streamed(&mut captured, oplog.as_ref(), event)?,
        };
        let write::Written {
            mut written,
            summary,
            clock_note,
            files,
        } = written;
        written.issues.extend(oplog_issue);
        written.issues.extend(clock::sampler_issue(&sampler));
        let mut files = files;
        let counts = samples.as_ref().map(|(d, _)| d.counts());
        if let Some((daisy, error)) = samples {
            let (f, issues) =
                write_samples(daisy, error, oplog.as_ref(), &options.out, &options.inputs);
            files.extend(f);
            written.issues.extend(issues);
        }
        Ok(CaptureOutcome {
            captured,
            written,
            summary,
            clock_note,
            files,
            csv: csv_path,
            samples: counts,
            out: options.out,
            device: live.describe(),
            inputs: options.inputs,
        })
    }
}

impl CaptureOutcome {
    /// Writes [`SUMMARY_FILE`] into the output directory; returns its path.
    pub fn write_summary(&self) -> Result<PathBuf> {
        let json = summary::json(&self.captured, &self.written, &self.device, self.samples);
        let path = self.out.join(SUMMARY_FILE);
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        atomic::write_atomic(&path, &self.inputs, |w| {
            std::io::Write::write_all(w, text.as_bytes())
        })?;
        Ok(path)
    }
}

/// The longest pause between polls while sampling (a window fills in a few thousand cycles).
const SAMPLE_POLL: Duration = Duration::from_micros(500);

/// Names the samples from `oplog` and writes the `ttprof_samples.*` files into `out`: the
/// files, and the issues (samples it could not place, a sampling that stopped on `error`,
/// no op log to name them).
fn write_samples(
    daisy: LiveSampler,
    error: Option<Error>,
    oplog: Option<&OpLog>,
    out: &Path,
    inputs: &Inputs,
) -> (Vec<PathBuf>, Vec<Issue>) {
    let mut issues = Vec::new();
    if let Some(e) = error {
        issues.push(Issue::error(
            None,
            format!("--sample: sampling stopped: {e}; the windows taken before are in the sampled profile"),
        ));
    }
    let Some(oplog) = oplog else {
        let n = daisy.counts().windows;
        issues.push(
            Issue::error(
                None,
                format!("--sample: {n} window(s) of samples not written: the op log that names their kernels could not be read"),
            )
            .with_count(n),
        );
        return (Vec::new(), issues);
    };
    let c = daisy.counts();
    if c.windows == 0 && c.queue_full > 0 {
        issues.push(Issue::warning(
            None,
            format!(
                "--sample: no window filled, and {} time(s) a tile could not be armed because the device's queue of \
                 posted register writes stayed full (on a device image the emulator applies them only while a run \
                 is in progress: did its process stop?)",
                c.queue_full
            ),
        ));
    } else if c.windows == 0 && c.unfinished == 0 && c.straddled == 0 {
        issues.push(Issue::warning(
            None,
            "--sample: no window was armed: while the capture polled, no core of any tile ran a launch with \
             ttprof's runtime (its ring blocks' STATE never said running)",
        ));
    }
    if c.windows == 0 && c.unfinished > 0 {
        issues.push(Issue::warning(
            None,
            format!(
                "--sample: no window filled: {} tile(s) were armed but their daisychains wrote nothing (on a device \
                 image the emulator applies register writes only while a run is in progress: did its process stop?)",
                c.unfinished
            ),
        ));
    }
    let (profile, placed) = daisy.into_profile(oplog);
    issues.extend(placed);
    match profile.write(out, None, inputs) {
        Ok((files, _)) => (files, issues),
        Err(e) => {
            issues.push(Issue::error(
                None,
                format!("--sample: the sampled profile could not be written: {e}"),
            ));
            (Vec::new(), issues)
        }
    }
}

/// A note when nothing is running on `image`: no kernel runs (its status word) and no
/// emulator answers its clock mailbox (an emulator that is alive but between launches
/// does). `None` otherwise.
fn idle_note(image: &MappedImage) -> Option<String> {
    let status = image.status();
    if status & devfile::STATUS_RUNNING != 0 || image.clock_served() {
        return None;
    }
    let last = if status & devfile::STATUS_FAULTED != 0 {
        "its last run faulted"
    } else if status & devfile::STATUS_FINISHED != 0 {
        "its last run finished"
    } else {
        "no run has started on it"
    };
    Some(format!(
        "note: no emulator is running on {} ({last}, and nothing answers its clock mailbox): the capture reads \
         what is already in the rings",
        image.path().display()
    ))
}

/// The op log at `path`, if given and readable. One that cannot be read (the capture has
/// consumed the rings already) is an error issue, and the CSV is written without names
/// (without the other outputs, for `all_outputs`).
fn read_oplog(
    path: Option<&Path>,
    all_outputs: bool,
    inputs: &Inputs,
) -> (Option<OpLog>, Option<Issue>) {
    let Some(path) = path else {
        return (None, None);
    };
    match OpLog::read(path, inputs) {
        Ok(log) => (Some(log), None),
        Err(e) => {
            let outputs = if all_outputs {
                " (and only the CSV and the capture summary are written)"
            } else {
                ""
            };
            let what = format!(
                "cannot name the captured zones: {e}: they are written as unresolved-site-<id>{outputs}; the rings \
                 were consumed, so keep this output"
            );
            (None, Some(Issue::error(None, what)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_dir, ImageBuilder};
    use riscv_linker::{Arch, NocCoord};

    /// An image file whose header words `STATUS` and clock-mailbox `SERVER` are as given.
    fn image(dir: &Path, status: u32, server: u32) -> PathBuf {
        let path = dir.join("device.img");
        ImageBuilder::new(Arch::WormholeB0, 1, vec![NocCoord::new(1, 1)])
            .write(&path)
            .unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[devfile::field::STATUS..][..4].copy_from_slice(&status.to_le_bytes());
        let server_at = devfile::field::CLOCK_MAILBOX + devfile::mailbox::SERVER;
        bytes[server_at..][..4].copy_from_slice(&server.to_le_bytes());
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn an_op_log_that_cannot_be_read_when_the_capture_ends_is_an_error_issue() {
        let dir = temp_dir("capture-oplog");
        let (log, issue) = read_oplog(Some(&dir.join("missing.jsonl")), true, &Inputs::none());
        let issue = issue.unwrap();
        assert!(log.is_none() && issue.is_error(), "{issue}");
        assert!(
            issue.what.contains("missing.jsonl") && issue.what.contains("unresolved-site-<id>"),
            "{issue}"
        );
        assert!(
            issue.what.contains("only the CSV and the capture summary"),
            "{issue}"
        );
        assert_eq!(read_oplog(None, false, &Inputs::none()).1, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_image_nothing_runs_on_gets_a_note() {
        let dir = temp_dir("capture-idle");
        let note = |status, server| {
            idle_note(
                &MappedImage::open_read_only(
                    &image(&dir, status, server),
                    &crate::inputs::Inputs::none(),
                )
                .unwrap(),
            )
        };
        let n = note(0, 0).expect("a fresh image: no emulator");
        assert!(
            n.contains("no emulator is running on") && n.contains("device.img"),
            "{n}"
        );
        assert!(
            n.contains("no run has started on it")
                && n.contains("reads what is already in the rings"),
            "{n}"
        );
        assert!(note(devfile::STATUS_FINISHED, 0)
            .unwrap()
            .contains("its last run finished"));
        assert!(note(devfile::STATUS_FINISHED | devfile::STATUS_FAULTED, 0)
            .unwrap()
            .contains("its last run faulted"));
        assert_eq!(
            note(devfile::STATUS_RUNNING, 0),
            None,
            "a kernel is running"
        );
        assert_eq!(
            note(devfile::STATUS_FINISHED, devfile::mailbox::SERVING),
            None,
            "an emulator between launches"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
