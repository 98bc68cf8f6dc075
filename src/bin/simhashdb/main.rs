//! The `simhashdb` command: a thin client of the simhashdb library.
//!
//! Results go to stdout, errors and progress to stderr. Exit codes are in [`exit_codes`]. A
//! closed stdout (e.g. `| head`) ends the command quietly with 0.

mod audit;
mod batches;
mod compact;
mod dedup;
mod delete;
mod documents;
mod exit_codes;
mod expire;
mod export;
mod find_all;
mod fingerprint;
mod get;
mod init;
mod insert;
mod migrate;
mod output;
mod progress;
mod query;
mod repair;
#[cfg(feature = "serve")]
mod serve;
mod stats;
mod tune;
mod verify;
mod writer;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A persistent database of 64-bit simhash fingerprints: finds every stored fingerprint within
/// k bits of a query.
#[derive(Parser)]
#[command(name = "simhashdb", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Init(init::Args),
    Insert(insert::Args),
    Dedup(dedup::Args),
    Query(query::Args),
    Delete(delete::Args),
    Expire(expire::Args),
    Batches(batches::Args),
    Compact(compact::Args),
    Verify(verify::Args),
    Repair(repair::Args),
    Migrate(migrate::Args),
    Stats(stats::Args),
    Audit(audit::Args),
    FindAll(find_all::Args),
    Fingerprint(fingerprint::Args),
    Get(get::Args),
    Export(export::Args),
    Tune(tune::Args),
    #[cfg(feature = "serve")]
    Serve(serve::Args),
}

/// Readers hold every file of the runs they read open (see docs/reliability.md): lift the
/// soft open-file limit to the hard one, as databases do.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// redb panics on some damaged pages instead of returning an error; the library turns those
/// panics into corruption errors, which are reported like any other: the panic's own message
/// would only repeat it.
fn quiet_redb_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.location().is_some_and(|l| l.file().contains("/redb-")) {
            default(info);
        }
    }));
}

fn main() -> ExitCode {
    raise_open_file_limit();
    quiet_redb_panics();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Init(args) => init::run(args),
        Command::Insert(args) => insert::run(args),
        Command::Dedup(args) => dedup::run(args),
        Command::Query(args) => query::run(args),
        Command::Delete(args) => delete::run(args),
        Command::Expire(args) => expire::run(args),
        Command::Batches(args) => batches::run(args),
        Command::Compact(args) => compact::run(args),
        Command::Verify(args) => return verify::run(args),
        Command::Repair(args) => repair::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Audit(args) => audit::run(args),
        Command::FindAll(args) => find_all::run(args),
        Command::Fingerprint(args) => fingerprint::run(args),
        Command::Get(args) => get::run(args),
        Command::Export(args) => export::run(args),
        Command::Tune(args) => tune::run(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(exit_codes::SUCCESS),
        Err(err) => exit_codes::report(&err),
    }
}
