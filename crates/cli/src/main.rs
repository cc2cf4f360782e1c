//! The `eltrace` binary: parses the command line and runs one command. Errors end up here
//! as one `eltrace: error: …` line and an exit code (2 for usage errors).

mod check;
mod cli;
mod diff;
mod dump;
mod export;
mod hugealloc;
mod outfile;
mod record;
mod report;
mod session;
mod util;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use crate::cli::{Cli, Command};
use crate::util::Fail;

/// Large blocks from huge pages (see `hugealloc`).
#[global_allocator]
static ALLOC: hugealloc::HugeAlloc = hugealloc::HugeAlloc::new();

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        Command::Record(a) => record::record(a.into()),
        Command::Report(a) => report::report(a.into()),
        Command::Export(a) => export::export(a.into()),
        Command::Check(a) => check::check(a.into()),
        Command::Dump(a) => dump::dump(a.into()),
        Command::Diff(a) => diff::diff(a.into()),
    };
    match result {
        Ok(code) => code,
        Err(Fail { code, msg }) => {
            eprintln!("eltrace: error: {msg}");
            ExitCode::from(code)
        }
    }
}

/// Help and version go out as clap renders them; real usage errors become one line.
fn usage_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        _ => {
            eprintln!(
                "eltrace: error: {}",
                util::one_line_clap_error(&e.to_string())
            );
            ExitCode::from(2)
        }
    }
}
