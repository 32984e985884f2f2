// A zone name is carried in an ELF symbol name, which cannot hold NUL.
fn main() {
    let _z = ttprof_rt::zone!("read\0tile");
}
