// #[instrument] makes a function's body a zone: it applies to functions only.
#[ttprof_rt::instrument]
struct Tile;

fn main() {}
