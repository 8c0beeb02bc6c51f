//! The `heliograph` command-line tool.

fn main() {
    println!("heliograph {}", heliograph::VERSION);
}
