// A literal that is not a string (here an integer) cannot name a zone.
fn main() {
    let _z = ttprof_rt::zone!(42);
}
