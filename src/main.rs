//! The `overdue` binary: everything lives in the library; see `overdue::cli`.

fn main() -> std::process::ExitCode {
    overdue::cli::main()
}
