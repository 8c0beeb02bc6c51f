//! The `heliograph` command-line tool; the program itself is [`heliograph::cli`].

fn main() {
    std::process::exit(heliograph::cli::main_with_args(std::env::args_os()));
}
