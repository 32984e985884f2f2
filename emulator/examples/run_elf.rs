//! Runs one kernel ELF on one core of a 1x1 device and prints the summary or the fault:
//! `cargo run -p ttprof-emu --example run_elf -- <elf> [brisc|ncrisc|trisc0|trisc1|trisc2] [wormhole_b0|blackhole] [addr=value ...]`
//! (`addr=value` words are written into L1 before the run, e.g. kernel arguments).

use ttprof_emu::{Arch, Device, DeviceConfig, Risc};

fn parse(s: &str) -> Option<u32> {
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: run_elf <elf> [risc] [arch] [addr=value ...]");
        std::process::exit(2);
    };
    let risc = args
        .get(1)
        .and_then(|r| Risc::from_name(r))
        .unwrap_or(Risc::Brisc);
    let arch = args
        .get(2)
        .and_then(|a| Arch::from_name(a))
        .unwrap_or(Arch::WormholeB0);
    let result = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut dev = Device::new(DeviceConfig::new(arch, (1, 1)))?;
        let tile = dev.tiles()[0];
        for kv in args.iter().skip(3) {
            let (k, v) = kv.split_once('=').ok_or("expected addr=value")?;
            dev.write_u32(
                0,
                tile,
                parse(k).ok_or("bad addr")?,
                parse(v).ok_or("bad value")?,
            )?;
        }
        dev.load_kernel(0, tile, risc, &std::fs::read(path)?, path)?;
        let s = dev.run()?;
        for h in &s.harts {
            println!(
                "{} {} {}: exit {:?}, {} instructions, {} cycles",
                h.chip, h.tile, h.risc, h.exit_code, h.instructions, h.cycles
            );
        }
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
