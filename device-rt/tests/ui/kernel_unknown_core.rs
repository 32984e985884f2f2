// kernel! names one of the five cores of a Tensix tile.
fn main() {}

ttprof_rt::kernel!(trisc3, main);
