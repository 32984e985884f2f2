//! One device and one consumer per device image (issue 15, items 7 and 8): a second
//! emulator on the same path is refused before it truncates the first's memory, a second
//! consumer is refused before it splits the records, and a reader whose image is truncated
//! under it gets an error instead of dying of SIGBUS.

use riscv_linker::{Arch, NocCoord};
use std::path::PathBuf;
use ttprof::devmem::{DeviceMemory, MappedImage};
use ttprof::readout::{DrainOptions, Drainer};
use ttprof_emu::{Device, DeviceConfig};

fn device(name: &str) -> (Device, PathBuf, NocCoord) {
    let (dev, _, tile) = ttprof_tests::emulated_device(&format!("test-image-locks/{name}"), (2, 1));
    let path = dev.image_path().to_path_buf();
    (dev, path, tile)
}

#[test]
fn a_second_emulator_on_the_same_image_is_refused_and_the_first_keeps_its_memory() {
    let (first, path, tile) = device("second-emulator");
    let mem = MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap();
    mem.write_u32(0, tile, 0x30000, 0xC0FFEE).unwrap();
    let mut cfg = DeviceConfig::new(Arch::WormholeB0, (2, 1));
    cfg.image = Some(path.clone());
    let e = Device::new(cfg.clone()).unwrap_err().to_string();
    assert!(
        e.contains("in use by another emulator") && e.contains(&path.display().to_string()),
        "{e}"
    );
    assert_eq!(
        mem.read_u32(0, tile, 0x30000).unwrap(),
        0xC0FFEE,
        "the first emulator's memory is intact"
    );
    drop(first);
    assert!(Device::new(cfg).is_ok(), "the lock goes with its emulator");
}

#[test]
fn a_second_consumer_is_refused_and_a_reader_that_does_not_consume_is_not() {
    let (_dev, path, _) = device("second-consumer");
    let (a, b) = (
        MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap(),
        MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap(),
    );
    let consume = DrainOptions {
        consume: true,
        attach_consumer: true,
    };
    let first = Drainer::attach(&a, consume).unwrap();
    let e = Drainer::attach(&b, consume)
        .err()
        .expect("a second consumer")
        .to_string();
    assert!(
        e.contains("already has a consumer draining it") && e.contains("one consumer per device"),
        "{e}"
    );
    assert!(
        Drainer::attach(&b, DrainOptions::default()).is_ok(),
        "reading without consuming is allowed"
    );
    drop(first);
    drop(a);
    assert!(
        Drainer::attach(&b, consume).is_ok(),
        "the lock goes with its consumer's file"
    );
}

#[test]
fn an_image_truncated_under_a_reader_is_an_error_not_a_crash() {
    let (_dev, path, _) = device("truncated");
    let mem = MappedImage::open(&path, &ttprof::inputs::Inputs::none()).unwrap();
    let mut d = Drainer::attach(
        &mem,
        DrainOptions {
            consume: true,
            attach_consumer: true,
        },
    )
    .unwrap();
    d.drain().unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let e = d.drain().unwrap_err().to_string();
    assert!(
        e.contains("was truncated to 4096 bytes while mapped"),
        "{e}"
    );
    let e = ttprof::readout::read(&mem, false).unwrap_err().to_string();
    assert!(e.contains("was truncated"), "{e}");
}

/// One sampler per device image (issue 41): a second `capture --sample` of an image, or one
/// of an image whose `run --sample` session is sampling it, is refused before it arms any
/// daisychain, naming the lock; the lock goes with its holder.
#[test]
fn a_second_sampler_is_refused() {
    let (_dev, path, _) = device("second-sampler");
    let none = ttprof::inputs::Inputs::none();
    let (a, b) = (
        MappedImage::open(&path, &none).unwrap(),
        MappedImage::open(&path, &none).unwrap(),
    );
    a.claim_sampler().unwrap();
    let e = b.claim_sampler().expect_err("a second sampler").to_string();
    assert!(
        e.contains("already has a sampler") && e.contains(&path.display().to_string()),
        "{e}"
    );
    drop(a);
    b.claim_sampler()
        .expect("the lock goes with its sampler's file");

    // A session that samples holds the lock while it lives.
    let out = ttprof_tests::fresh_dir("target/test-image-locks/sampling-session");
    let mut cfg = ttprof::session::Config::new(Arch::WormholeB0, (1, 1), &out);
    cfg.sample = Some(ttprof::lines::sample::SampleConfig::new(8));
    let session = ttprof::session::Session::start(cfg).unwrap();
    let image = out.join("device.img");
    let other = MappedImage::open(&image, &none).unwrap();
    let e = other
        .claim_sampler()
        .expect_err("sampled by the session")
        .to_string();
    assert!(e.contains("already has a sampler"), "{e}");
    drop(session);
    other.claim_sampler().expect("released with the session");
}
