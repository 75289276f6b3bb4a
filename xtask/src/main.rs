//! `cargo xtask`: the one entry point for building, booting and testing.
//!
//!     cargo xtask run  [OPTIONS] [-- PROGRAM ARGS...]   boot in QEMU
//!     cargo xtask test [OPTIONS] [-- SUITE...]          every test, host and QEMU (or some suites)
//!     cargo xtask image [OPTIONS]                       just build the disk image
//!     cargo xtask prof [OPTIONS] PROGRAM [ARGS...]      run a profiled program, gprof it
//!     cargo xtask gdb [OPTIONS] [-- PROGRAM ARGS...]    the kernel under GDB
//!     cargo xtask fuzz [--minutes N] [--seed S]         the system-call fuzzer
//!     cargo xtask bench [--quick] [--accel kvm|tcg]    this kernel against Linux
//!     cargo xtask lab [ID | start ID]                   the book's labs: list, check, start one
//!     cargo xtask figures                               remake the book's SVG figures
//!     cargo xtask book                                  the book as HTML (mdBook), links checked
//!
//! Argument parsing is kept apart from what the commands do (`options.rs`),
//! and every failure is one line on stderr and a non-zero exit: a bad flag or a
//! missing tool never ends in a Rust backtrace.

mod bench;
mod book;
mod build;
mod checks;
mod crashdisk;
mod debscript;
mod diskfuzz;
mod docs;
mod expect;
mod figures;
mod gdb;
mod gdbdoc;
mod lab;
mod linuxdisk;
mod options;
mod prof;
mod pytests;
mod qemu;
mod readme;
mod repo;
mod rootfs;
mod setup;
mod suites;
mod test;

use std::process::ExitCode;

fn main() -> ExitCode {
    let result =
        utf8_args()
            .and_then(|args| options::parse(&args))
            .and_then(|command| match command {
                options::Command::Help => {
                    print!("{}{}", options::USAGE, test::parts_help());
                    Ok(ExitCode::SUCCESS)
                }
                options::Command::Run(opts) => qemu::run(&opts),
                options::Command::Image(opts) => build::image(&opts, &build::Boot::normal(&opts))
                    .map(|image| {
                        println!("{}", image.display());
                        ExitCode::SUCCESS
                    }),
                options::Command::Test(opts) => test::run(&opts),
                options::Command::Prof(opts) => prof::run(&opts),
                options::Command::Kprof(opts) => prof::run_kernel(&opts),
                options::Command::Gdb(opts) => gdb::run(&opts, opts.batch.as_ref()),
                options::Command::Fuzz(opts) => qemu::run(&fuzz_run(opts)),
                options::Command::Bench(opts) => bench::run(&opts),
                options::Command::Figures => figures::run(),
                options::Command::Book => book::run(),
                options::Command::Rootfs => rootfs::run(),
                options::Command::Pytests(opts, modules) => pytests::command(&opts, &modules),
                options::Command::Lab(options::LabCommand::List) => lab::list(),
                options::Command::Lab(options::LabCommand::Start(id)) => lab::start(&id),
                options::Command::Lab(options::LabCommand::Check(id)) => lab::run(&id),
            });
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::from(2)
        }
    }
}

/// The command line, or a one-line error for an argument that is not UTF-8
/// (the guest's programs are passed their arguments through a text file).
fn utf8_args() -> Result<Vec<String>, String> {
    std::env::args_os()
        .skip(1)
        .enumerate()
        .map(|(i, arg)| {
            arg.into_string().map_err(|raw| {
                format!(
                    "argument {} ({}) is not valid UTF-8; programs in the guest take UTF-8 arguments only",
                    i + 1,
                    raw.to_string_lossy()
                )
            })
        })
        .collect()
}

/// `cargo xtask fuzz`: /bin/sysfuzz as the program, with a time limit that
/// leaves room for the boot and the final checks.
fn fuzz_run(mut opts: options::Options) -> options::Options {
    let minutes = opts.fuzz.minutes.unwrap_or(1);
    let mut program = vec![
        "/bin/sysfuzz".to_string(),
        "--seconds".into(),
        (minutes * 60).to_string(),
    ];
    if let Some(seed) = opts.fuzz.seed {
        program.extend(["--seed".into(), seed.to_string()]);
    }
    if let Some(workers) = opts.fuzz.workers {
        program.extend(["--workers".into(), workers.to_string()]);
    }
    opts.program = program;
    opts.timeout = Some(opts.timeout.unwrap_or(minutes * 60 + 240));
    opts
}
