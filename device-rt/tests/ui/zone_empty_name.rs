// A zone needs a name: the empty string is refused at its site.
fn main() {
    let _z = ttprof_rt::zone!("");
}
