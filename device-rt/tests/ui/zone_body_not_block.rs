// The two-argument form of zone! takes a block, not an expression.
fn main() {
    let x = ttprof_rt::zone!("compute", 1 + 2);
    let _ = x;
}
