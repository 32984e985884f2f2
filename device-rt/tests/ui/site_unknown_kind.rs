// The runtime's macros intern every site through __site!; a kind it does not know (a bug in
// a runtime macro, never user code) is named with the kinds it knows.
fn main() {
    let _ = ttprof_rt::__site!(ttprof_rt, span, "x");
}
