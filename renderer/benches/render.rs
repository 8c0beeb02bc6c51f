//! Rendering benchmark (filled in with the CPU backend).
fn main() {}
