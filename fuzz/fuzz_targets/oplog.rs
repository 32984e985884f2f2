//! Op logs: `ttprof::oplog::OpLog::read` of a file holding arbitrary bytes never panics,
//! and what it reads can be looked up (ops by device and run id, kernels by tile and RISC,
//! ELF paths resolved against the log's directory).
#![no_main]

use libfuzzer_sys::fuzz_target;
use riscv_linker::{NocCoord, Risc};
use ttprof::oplog::OpLog;

ttprof_fuzz::limit_allocations!();

fuzz_target!(|data: &[u8]| ttprof_fuzz::run(|| {
    let scratch = ttprof_fuzz::scratch();
    scratch.set(data, 0);
    let log = match OpLog::read(scratch.path(), &ttprof::inputs::Inputs::none()) {
        Ok(log) => log,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for op in log.ops().take(64) {
        assert_eq!(log.op(op.device, op.run_id).map(|o| (o.device, o.run_id)), Some((op.device, op.run_id)));
        for k in op.kernels.iter().take(16) {
            let _ = log.resolve_path(&k.elf);
            if let (Some(risc), Some(c)) = (k.risc(), k.cores.first()) {
                let tile = NocCoord::new(c[0], c[1]);
                assert!(op.kernel_for(tile, risc).is_some(), "a kernel runs where its op says");
            }
        }
        let _ = op.kernel_for(NocCoord::new(1, 1), Risc::Brisc);
    }
}));
