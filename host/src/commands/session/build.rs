//! Building kernels for a session: what `ttprof build` is asked (one kernel crate, C/C++
//! sources for one core, or a tt-metal dataflow kernel: [`BuildRequest`]), and the kernels an op names by their sources
//! (`RISC=CRATE_DIR:BINARY`, `RISC=FILE.cpp`), each built once per run.

use super::Backend;
use crate::error::{Error, Result};
use crate::kernels::{self, BuiltKernels, CKernelBuild, KernelBuild};
use crate::tt_metal_build::TtMetalBuild;
use riscv_linker::{Arch, Risc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `ttprof build` is asked to build: a kernel crate (its directory), or C/C++ sources
/// compiled and linked into one kernel for [`BuildRequest::core`].
#[derive(Clone, Debug)]
pub struct BuildRequest {
    /// One kernel crate directory, or C/C++ sources (`.c`, `.cpp`, `.cc`, `.cxx`).
    pub paths: Vec<PathBuf>,
    /// C/C++: the core the kernel is linked for (required for sources, refused for a crate).
    pub core: Option<Risc>,
    /// The chip architecture the kernels are linked for.
    pub arch: Arch,
    /// C/C++: build without `PROFILE_KERNEL` (every profiler macro expands to nothing).
    pub no_profile: bool,
    /// A crate's Cargo features to enable.
    pub features: Vec<String>,
    /// Build a crate without its default features.
    pub no_default_features: bool,
    /// Cargo's target directory, or for C/C++ the directory of the objects and the ELF
    /// (`None`: the default of [`KernelBuild::new`] / [`CKernelBuild::default_out_dir`]).
    pub target_dir: Option<PathBuf>,
    /// C/C++: more compiler flags (`-Wl,`/`-l`/`-L` flags also go to the link).
    pub flags: Vec<String>,
    /// Build one tt-metal dataflow kernel unchanged against tt-metal's headers and firmware
    /// ([`crate::tt_metal_build`]) with these program settings.
    pub tt_metal: Option<TtMetalOptions>,
}

/// The program's settings of a tt-metal kernel (`ttprof build --tt-metal`).
#[derive(Clone, Debug, Default)]
pub struct TtMetalOptions {
    /// The kernel's defines, `NAME=VALUE` or `NAME`.
    pub defines: Vec<String>,
    /// Its compile-time arguments.
    pub compile_args: Vec<u32>,
    /// Its named compile-time arguments.
    pub named_args: Vec<(String, u32)>,
    /// Circular buffers' data formats (the others are bfloat16).
    pub cb_formats: Vec<(u8, crate::tt_metal_build::CbFormat)>,
    /// The NoC it uses (0 or 1; dataflow kernels).
    pub noc: u8,
    /// A compute kernel for all three TRISCs (`--core compute`), each its own ELF.
    pub compute_all: bool,
    /// A compute kernel's configuration (math fidelity, approximation, Dest modes).
    pub compute: crate::tt_metal_build::ComputeConfig,
}

impl BuildRequest {
    /// Builds what was asked: each kernel's name and the absolute path of its ELF. A
    /// request that mixes crates and sources, or gives a crate options of C/C++ (or the
    /// reverse), is an [`Error::Argument`] before anything is built.
    pub fn build(&self) -> Result<Vec<(String, PathBuf)>> {
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        if let Some(t) = &self.tt_metal {
            let b = self.tt_metal_build(t)?;
            let builds = if t.compute_all {
                crate::tt_metal_build::per_trisc(&b)
            } else {
                vec![b]
            };
            let mut out = Vec::new();
            for b in builds {
                let elf = crate::tt_metal_build::build(&b)?;
                out.push((b.name, absolute(elf)));
            }
            return Ok(out);
        }
        if is_c_build(&self.paths)? {
            let b = self.c_build()?;
            let elf = kernels::build_c(&b)?;
            return Ok(vec![(b.name, absolute(elf))]);
        }
        let built = kernels::build(&self.kernel_build()?)?;
        Ok(built
            .binaries
            .into_iter()
            .map(|(name, path)| (name, absolute(path)))
            .collect())
    }

    fn kernel_build(&self) -> Result<KernelBuild> {
        let [crate_dir] = self.paths.as_slice() else {
            return Err(Error::Argument {
                what: "build one kernel crate at a time (or C/C++ sources with --core)".into(),
            });
        };
        if self.core.is_some() || self.no_profile || !self.flags.is_empty() {
            return Err(Error::Argument { what: format!(
                "{} is a kernel crate: --core, --no-profile and `-- FLAGS` are for C/C++ sources \
                 (a crate says its cores in build.rs; build without `profile` with --no-default-features)",
                crate_dir.display()
            ) });
        }
        let mut b = KernelBuild::new(crate_dir, self.arch);
        b.features = self.features.clone();
        b.no_default_features = self.no_default_features;
        if let Some(t) = &self.target_dir {
            b.target_dir = t.clone();
        }
        Ok(b)
    }

    fn tt_metal_build(&self, t: &TtMetalOptions) -> Result<TtMetalBuild> {
        let [source] = self.paths.as_slice() else {
            return Err(Error::Argument {
                what: "--tt-metal builds one kernel source at a time (FILE.cpp)".into(),
            });
        };
        if kernels::c_source_kind(source) != Some(true) {
            return Err(Error::BadFile {
                path: source.clone(),
                what: "--tt-metal takes a C++ kernel source (.cpp, .cc, .cxx)".into(),
            });
        }
        let risc = match (self.core, t.compute_all) {
            (Some(r), false) => r,
            (None, true) => crate::tt_metal_build::TRISCS[0],
            (Some(_), true) => {
                return Err(Error::Argument {
                    what: "give one --core: a RISC, or compute for all three TRISCs".into(),
                })
            }
            (None, false) => {
                return Err(Error::Argument {
                    what: format!(
                        "{}: give --core brisc|ncrisc for a dataflow kernel, compute for a \
                         compute kernel (all three TRISCs), or trisc0|trisc1|trisc2 for one of them",
                        source.display()
                    ),
                })
            }
        };
        if !self.features.is_empty() || self.no_default_features {
            return Err(Error::Argument {
                what: "--features and --no-default-features are for kernel crates".into(),
            });
        }
        let mut b = TtMetalBuild::new(source.clone(), risc, self.arch);
        b.profile = !self.no_profile;
        b.defines = t.defines.clone();
        b.compile_args = t.compile_args.clone();
        b.named_args = t.named_args.clone();
        b.cb_formats = t.cb_formats.clone();
        b.noc = t.noc;
        b.compute = t.compute;
        b.flags = self.flags.clone();
        match &self.target_dir {
            Some(dir) => b.out_dir = dir.clone(),
            // A compute kernel's three parts go into `<arch>/compute/<trisc>`.
            None if t.compute_all => b.out_dir.set_file_name("compute"),
            None => {}
        }
        Ok(b)
    }

    fn c_build(&self) -> Result<CKernelBuild> {
        let Some(risc) = self.core else {
            return Err(Error::Argument { what: format!(
                "{}: a C/C++ kernel is linked for one core: give --core brisc|ncrisc|trisc0|trisc1|trisc2",
                self.paths[0].display()
            ) });
        };
        if !self.features.is_empty() || self.no_default_features {
            return Err(Error::Argument { what: "--features and --no-default-features are for kernel crates; C/C++ takes -- FLAGS"
                    .into(), });
        }
        let mut b = CKernelBuild::new(self.paths.clone(), risc, self.arch);
        b.profile = !self.no_profile;
        b.out_dir = self
            .target_dir
            .clone()
            .unwrap_or_else(|| b.default_out_dir());
        b.flags = self.flags.clone();
        Ok(b)
    }
}

/// Whether the paths name C/C++ sources (every path a `.c`/`.cpp`/...).
fn is_c_build(paths: &[PathBuf]) -> Result<bool> {
    let c = paths
        .iter()
        .filter(|p| kernels::c_source_kind(p).is_some())
        .count();
    match c {
        0 => Ok(false),
        n if n == paths.len() => Ok(true),
        _ => Err(Error::Argument {
            what: "give either one kernel crate or C/C++ sources (.c, .cpp, .cc, .cxx), not both"
                .into(),
        }),
    }
}

/// A kernel about to be built from its sources (reported before the build starts).
#[derive(Clone, Copy, Debug)]
pub enum Building<'a> {
    /// C/C++ sources (`--kernel` as given) for one RISC.
    Sources {
        /// The sources as the op names them (`a.cpp,b.c`).
        spec: &'a str,
        /// The RISC they are built for.
        risc: Risc,
        /// The architecture they are linked for.
        arch: Arch,
    },
    /// A kernel crate (every binary of it).
    Crate {
        /// The crate's directory.
        dir: &'a Path,
        /// The architecture it is linked for.
        arch: Arch,
    },
}

/// The kernels of a run's ops, each crate and each C/C++ kernel built once.
pub(crate) struct Builder {
    arch: Arch,
    backend: Backend,
    crates: BTreeMap<PathBuf, BuiltKernels>,
    c_kernels: BTreeMap<(String, Risc), PathBuf>,
}

impl Builder {
    pub(crate) fn new(arch: Arch, backend: Backend) -> Builder {
        Builder {
            arch,
            backend,
            crates: BTreeMap::new(),
            c_kernels: BTreeMap::new(),
        }
    }

    /// The ELF of `spec` for `risc`: an ELF file as it is, `CRATE_DIR:BINARY` or C/C++
    /// sources built first (once; `building` is told before each build).
    pub(crate) fn kernel(
        &mut self,
        spec: &str,
        risc: Risc,
        building: &mut dyn FnMut(Building),
    ) -> Result<PathBuf> {
        let arch = self.arch;
        if let Some(sources) = super::run::spec::c_sources(spec) {
            if let Some(elf) = self.c_kernels.get(&(spec.to_string(), risc)) {
                return Ok(elf.clone());
            }
            building(Building::Sources { spec, risc, arch });
            let mut b = CKernelBuild::new(sources, risc, arch);
            if self.backend == Backend::Timestamper {
                b.flags.push("-DTTPROF_BACKEND_TIMESTAMPER".into());
            }
            let elf = kernels::build_c(&b)?;
            self.c_kernels.insert((spec.to_string(), risc), elf.clone());
            return Ok(elf);
        }
        let Some((dir, bin)) = super::run::spec::split_crate(spec) else {
            let p = PathBuf::from(spec);
            if !p.is_file() {
                return Err(Error::Argument { what: format!(
                    "kernel {spec:?} is neither an ELF file nor CRATE_DIR:BINARY (a directory with Cargo.toml, a colon, a binary name) \
                     nor C/C++ sources (FILE.c, FILE.cpp)"
                ) });
            }
            return Ok(p);
        };
        let dir = PathBuf::from(dir);
        if !self.crates.contains_key(&dir) {
            building(Building::Crate { dir: &dir, arch });
            let mut b = KernelBuild::new(&dir, arch);
            b.features
                .extend(self.backend.kernel_feature().map(String::from));
            self.crates.insert(dir.clone(), kernels::build(&b)?);
        }
        self.crates[&dir].elf(bin).map(Path::to_path_buf)
    }
}
