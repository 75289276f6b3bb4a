//! /bin/profways [--rounds N] LIBRARY PROGRAM [ARGS...]: one dynamically
//! linked glibc program built with `gcc -pg`, profiled both ways, with what
//! each way costs it.
//!
//! - **SIGPROF emulation**: the program as it is. glibc's gcrt1.o starts
//!   glibc's own runtime, whose profil() arms ITIMER_PROF and adds to a bin
//!   in a SIGPROF handler: a signal frame, the handler and rt_sigreturn for
//!   every sample.
//! - **native profil**: the same program with LIBRARY (the project's
//!   libgmon.so) in `LD_PRELOAD`, whose `__monstartup`, `mcount` and
//!   `_mcleanup` the loader binds in place of glibc's: the kernel adds to
//!   the bin on the way back to user mode.
//!
//! Each round runs the program once each way, the order alternating from
//! round to round so that a slow stretch of the host lands on both alike.
//! A run is timed from fork to reaping (monotonic clock), and its samples
//! are the sum of its gmon.out's histogram (written to
//! `/tmp/gmon/WAY.PID` through `GMON_OUT_PREFIX`). Printed: each way's run
//! time and samples (median and quartiles over the rounds), and the time
//! the emulation adds per sample against the native way (the difference of
//! the two runs of a round over the emulated run's samples), or, when the
//! quartiles of that difference reach zero, that this run does not resolve
//! it (`kcore::spread`). mcount differs too (glibc's and the project's),
//! so the difference is the whole runtime's, as a user of each sees it.
//!
//! The last round's two profiles stay in /tmp/gmon for gprof: `cargo xtask
//! prof --way both ./a.out` runs this and prints both flat profiles.

#![no_std]
#![no_main]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use kcore::spread::Quartiles;
use libc_lite::{eprintln, println, sys};

libc_lite::entry!(run);

const DIR: &str = "/tmp/gmon";

#[derive(Clone, Copy)]
enum Way {
    Sigprof,
    Native,
}

impl Way {
    /// The name of its profiles (`/tmp/gmon/NAME.PID`).
    fn file(self) -> &'static str {
        match self {
            Way::Sigprof => "sigprof",
            Way::Native => "native",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Way::Sigprof => "SIGPROF emulation",
            Way::Native => "native profil",
        }
    }
}

/// One run of the program: its time in nanoseconds and its profile's path.
fn run_once(way: Way, library: &str, program: &[&str]) -> Result<(u64, String), String> {
    let prefix = format!("GMON_OUT_PREFIX={DIR}/{}", way.file());
    let preload = format!("LD_PRELOAD={library}");
    let mut env = alloc::vec!["PATH=/bin:/usr/bin", "HOME=/", prefix.as_str()];
    if let Way::Native = way {
        env.push(preload.as_str());
    }
    let start = sys::monotonic_nanos();
    let pid = sys::fork().map_err(|e| format!("fork: {}", e.message()))?;
    if pid == 0 {
        let e = sys::execve(program[0], program, &env);
        eprintln!("profways: {}: {}", program[0], e.message());
        sys::exit(127);
    }
    let status = sys::waitpid(pid as i32).map_err(|e| format!("wait: {}", e.message()))?;
    let took = sys::monotonic_nanos() - start;
    if status != 0 {
        return Err(format!(
            "{} ({}) ended with wait status {status:#x}",
            program[0],
            way.name()
        ));
    }
    Ok((took, format!("{DIR}/{}.{pid}", way.file())))
}

/// The samples a profile holds: the sum of its histogram.
fn samples(path: &str) -> Result<u64, String> {
    let bytes = sys::read_file(path).map_err(|e| format!("{path}: {}", e.message()))?;
    let profile = kcore::gmon::decode(&bytes).map_err(|e| format!("{path}: {e:?}"))?;
    Ok(profile.bins.iter().map(|&b| u64::from(b)).sum())
}

/// Times and samples of one way, over the rounds.
#[derive(Default)]
struct Tally {
    millis: Vec<f64>,
    samples: Vec<f64>,
}

fn quartiles(values: &[f64]) -> Quartiles {
    Quartiles::of(values).unwrap_or(Quartiles {
        q1: 0.0,
        median: 0.0,
        q3: 0.0,
    })
}

fn measure(rounds: usize, library: &str, program: &[&str]) -> Result<(), String> {
    let mut tallies = [Tally::default(), Tally::default()];
    let mut added_per_sample = Vec::new();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [Way::Sigprof, Way::Native]
        } else {
            [Way::Native, Way::Sigprof]
        };
        let mut this_round = [(0.0, 0u64); 2];
        for way in order {
            let (nanos, profile) = run_once(way, library, program)?;
            let taken = samples(&profile)?;
            if round + 1 < rounds {
                // Only the last round's profiles stay, for gprof.
                let _ = sys::unlink(&profile);
            }
            let millis = nanos as f64 / 1e6;
            let tally = &mut tallies[way as usize];
            tally.millis.push(millis);
            tally.samples.push(taken as f64);
            this_round[way as usize] = (millis, taken);
        }
        let ((emulated, taken), (native, _)) = (this_round[0], this_round[1]);
        if taken > 0 {
            added_per_sample.push((emulated - native) * 1000.0 / taken as f64);
        }
    }
    for way in [Way::Sigprof, Way::Native] {
        let tally = &tallies[way as usize];
        let (t, s) = (quartiles(&tally.millis), quartiles(&tally.samples));
        println!(
            "profways: {:<18} run median {:.1} ms (quartiles {:.1} to {:.1}), samples median {:.0} (quartiles {:.0} to {:.0})",
            way.name(),
            t.median,
            t.q1,
            t.q3,
            s.median,
            s.q1,
            s.q3
        );
    }
    let added = quartiles(&added_per_sample);
    if added.resolved() {
        println!(
            "profways: the emulation adds {:.1} us a sample against the native way (quartiles {:.1} to {:.1})",
            added.median, added.q1, added.q3
        );
    } else {
        println!(
            "profways: what the emulation adds a sample is below what this run resolves (quartiles {:.1} to {:.1} us)",
            added.q1, added.q3
        );
    }
    println!("profways: the last round's profiles are in {DIR} (sigprof.PID, native.PID)");
    Ok(())
}

fn run() -> i32 {
    let args: Vec<&str> = libc_lite::env::args().skip(1).collect();
    let (rounds, rest) = match args.as_slice() {
        ["--rounds", n, rest @ ..] => match n.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => (n, rest),
            _ => {
                eprintln!("profways: --rounds takes 1 to 100, not '{n}'");
                return 2;
            }
        },
        rest => (5, rest),
    };
    let [library, program @ ..] = rest else {
        eprintln!("usage: profways [--rounds N] LIBRARY PROGRAM [ARGS...]");
        return 2;
    };
    if program.is_empty() {
        eprintln!("usage: profways [--rounds N] LIBRARY PROGRAM [ARGS...]");
        return 2;
    }
    let _ = sys::mkdir(DIR, 0o755);
    let hz = sys::kinfo().map_or(0, |k| k.hz);
    println!(
        "profways: {}, {rounds} rounds each way, {hz} Hz tick",
        program[0]
    );
    match measure(rounds, library, program) {
        Ok(()) => {
            println!("profways: done");
            0
        }
        Err(why) => {
            eprintln!("profways: {why}");
            1
        }
    }
}
