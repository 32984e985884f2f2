// Sum zones are sites too: the empty name is refused.
fn main() {
    let _s = ttprof_rt::sum_zone!("");
}
