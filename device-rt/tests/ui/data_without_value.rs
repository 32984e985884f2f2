// data! records a value: it cannot be left out.
fn main() {
    ttprof_rt::data!("bytes-read");
}
