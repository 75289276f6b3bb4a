//! /bin/init, process 1.
//!
//! First, when the boot options name a root disk (`root=/dev/vda` in
//! /proc/cmdline, as `cargo xtask run` boots), it makes that disk `/`, as
//! an initramfs's init does on Linux: mount the disk on /newroot, put the
//! ramdisk's /dev, a /proc and a /tmp in memory inside it, and move the
//! whole onto `/` (mount's MS_MOVE). A disk that will not mount is said
//! and the machine stays on the ramdisk.
//!
//! With arguments (`cargo xtask run -- PROGRAM ARGS`), it runs that one
//! program and exits with its status, which powers the machine off. Without,
//! it runs the shell on the console; when the shell exits, so does init.
//! Meanwhile it reaps every orphan the kernel hands it.
//!
//! Which shell: where /etc/passwd names root's (a Debian root from
//! `cargo xtask run --root debian`), init logs root in as `login -f root`
//! would on a console: root's shell, started as a login shell (argv[0]
//! "-bash", so it reads /etc/profile and ~/.profile), in root's home, with
//! login's environment (`kcore::login`). Without one (the project's own
//! root), the project's /bin/sh with PATH=/bin.

#![no_std]
#![no_main]

extern crate alloc;

use abi::types::{MS_BIND, MS_MOVE};
use alloc::string::String;
use alloc::vec::Vec;
use libc_lite::{eprintln, sys};

libc_lite::entry!(run);

/// The `root=` boot option, if any.
fn root_option() -> Option<String> {
    let cmdline = sys::read_file("/proc/cmdline").ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
    cmdline
        .split_whitespace()
        .find_map(|word| word.strip_prefix("root="))
        .filter(|device| !device.is_empty())
        .map(String::from)
}

/// Makes `device` the root file system (see the top of the file).
fn mount_root(device: &str) -> Result<(), String> {
    let step = |what: &str, result: Result<(), libc_lite::Errno>| {
        result.map_err(|e| alloc::format!("{what}: {}", e.message()))
    };
    let _ = sys::mkdir("/newroot", 0o755);
    step("mount", sys::mount(device, "/newroot", "ext3", 0, None))?;
    let inner = [
        ("/dev", "/newroot/dev", "", MS_BIND, None),
        ("proc", "/newroot/proc", "proc", 0, None),
        ("tmpfs", "/newroot/tmp", "tmpfs", 0, Some("mode=1777")),
    ];
    for (source, target, kind, flags, data) in inner {
        let _ = sys::mkdir(target, 0o755);
        if let Err(e) = sys::mount(source, target, kind, flags, data) {
            let _ = sys::umount2("/newroot", 0);
            return Err(alloc::format!("mount {target}: {}", e.message()));
        }
    }
    step("move to /", sys::mount("/newroot", "/", "", MS_MOVE, None))?;
    step("chdir /", sys::chdir("/"))
}

/// Unmounts what `mount_root` mounted, the disk last, so it is left clean
/// (the kernel syncs at power-off anyway, for a disk still busy).
fn unmount_root() {
    for target in ["/tmp", "/proc", "/dev", "/"] {
        if let Err(e) = sys::umount2(target, 0) {
            eprintln!("init: umount {target}: {}", e.message());
            return;
        }
    }
}

fn run() -> i32 {
    let mut on_disk = false;
    if let Some(device) = root_option() {
        match mount_root(&device) {
            Ok(()) => on_disk = true,
            Err(why) => eprintln!("init: root {device}: {why}; staying on the ramdisk"),
        }
    }
    let status = run_program();
    // The files to bring home are on the disk or in /tmp, which the
    // unmounts take away: they go now.
    if let Err(e) = sys::export_files() {
        eprintln!("init: export: {}", e.message());
    }
    if on_disk {
        unmount_root();
    }
    status
}

/// Root's account, if /etc/passwd names it with a shell that can run.
fn root_login() -> Option<kcore::login::Account> {
    let passwd = sys::read_file("/etc/passwd").ok()?;
    let root = kcore::login::account(&String::from_utf8_lossy(&passwd), 0)?;
    sys::access(&root.shell, abi::types::X_OK).ok()?;
    Some(root)
}

/// What init runs: the path, its argv, its environment, and where.
struct Program {
    path: String,
    argv: Vec<String>,
    env: Vec<String>,
    dir: Option<String>,
}

/// The program named on the command line, else root's login shell, else
/// the project's shell (see the top of the file).
fn program() -> Program {
    let args: Vec<String> = libc_lite::env::args().skip(1).map(String::from).collect();
    let plain_env = || alloc::vec![String::from("PATH=/bin"), String::from("HOME=/")];
    if !args.is_empty() {
        return Program {
            path: args[0].clone(),
            argv: args,
            env: plain_env(),
            dir: None,
        };
    }
    match root_login() {
        Some(root) => {
            // What login(1) shows first: the message of the day.
            if let Ok(motd) = sys::read_file("/etc/motd") {
                libc_lite::print!("{}", String::from_utf8_lossy(&motd));
            }
            Program {
                argv: alloc::vec![root.login_argv0()],
                env: root.environment("linux"),
                dir: Some(root.home.clone()),
                path: root.shell,
            }
        }
        None => Program {
            path: String::from("/bin/sh"),
            argv: alloc::vec![String::from("/bin/sh")],
            env: plain_env(),
            dir: None,
        },
    }
}

/// Runs the program (or the shell) and reaps orphans until it ends; its
/// exit status.
fn run_program() -> i32 {
    let program = program();
    let child = match sys::fork() {
        Ok(0) => {
            if let Some(dir) = &program.dir
                && let Err(e) = sys::chdir(dir)
            {
                eprintln!("init: cannot enter {dir}: {}", e.message());
            }
            let argv: Vec<&str> = program.argv.iter().map(String::as_str).collect();
            let env: Vec<&str> = program.env.iter().map(String::as_str).collect();
            let e = sys::execve(&program.path, &argv, &env);
            eprintln!("init: cannot run {}: {}", program.path, e.message());
            sys::exit(127);
        }
        Ok(pid) => pid,
        Err(e) => {
            eprintln!("init: fork: {}", e.message());
            return 1;
        }
    };
    loop {
        match sys::wait4(-1, 0) {
            Ok((pid, status)) if pid == child => {
                return match (sys::exited(status), sys::signaled(status)) {
                    (Some(code), _) => code,
                    (_, Some(sig)) => 128 + sig as i32,
                    _ => 1,
                };
            }
            Ok(_) => {} // an orphan, reaped
            Err(e) => {
                eprintln!("init: wait: {}", e.message());
                return 1;
            }
        }
    }
}
