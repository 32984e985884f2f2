use riscv_linker::Risc;

fn main() {
    riscv_linker::build::kernels(&[("probe", Risc::Brisc)]);
}
