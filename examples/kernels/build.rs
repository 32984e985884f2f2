use riscv_linker::Risc;

fn main() {
    riscv_linker::build::kernels(&[
        ("reader", Risc::Brisc),
        ("writer", Risc::Ncrisc),
        ("unpack", Risc::Trisc0),
        ("math", Risc::Trisc1),
        ("pack", Risc::Trisc2),
        ("bench", Risc::Brisc),
        ("records", Risc::Brisc),
        ("sums", Risc::Brisc),
        ("fault", Risc::Brisc),
        ("twin", Risc::Brisc),
        ("chain_producer", Risc::Brisc),
        ("chain_compute", Risc::Trisc1),
        ("chain_consumer", Risc::Ncrisc),
        ("sites_16", Risc::Brisc),
        ("sites_48", Risc::Brisc),
        ("signal_sites", Risc::Brisc),
        ("counted", Risc::Trisc1),
    ]);
}
