// Names are interned at build time: a variable cannot name a zone.
fn main() {
    let name = "read-tile";
    let _z = ttprof_rt::zone!(name);
}
