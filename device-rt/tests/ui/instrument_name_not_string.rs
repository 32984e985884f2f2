// #[instrument] takes an optional string literal as the zone's name.
#[ttprof_rt::instrument(42)]
fn compute() {}

fn main() {
    compute();
}
