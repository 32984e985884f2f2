// Events are sites too: the empty name is refused.
fn main() {
    ttprof_rt::event!("");
}
