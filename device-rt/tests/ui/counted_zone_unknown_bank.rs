// A counted zone names one of the five counter banks.
fn main() {
    let _z = ttprof_rt::counted_zone!("mm", gpu);
}
