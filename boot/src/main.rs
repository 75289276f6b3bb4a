//! `boot bios|uefi KERNEL RAMDISK OUT [--log]`: writes a bootable disk
//! image (`build_image`) as a program of its own.
//!
//! xtask runs this rather than linking the bootloader crate in: the
//! bootloader's build compiles its BIOS and UEFI stages, about a minute and
//! a half on a fresh clone, and inside `cargo xtask`'s own build (which
//! cargo runs quietly) that was a long silence before anything. As a
//! separate program it is a step xtask names and times like the others.

use std::path::Path;
use std::process::ExitCode;

use boot::Firmware;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (firmware, rest) = match args.split_first() {
        Some((f, rest)) if f == "bios" => (Firmware::Bios, rest),
        Some((f, rest)) if f == "uefi" => (Firmware::Uefi, rest),
        _ => return usage(),
    };
    let (paths, log) = match rest {
        [k, r, o] => ([k, r, o], false),
        [k, r, o, flag] if flag == "--log" => ([k, r, o], true),
        _ => return usage(),
    };
    let [kernel, ramdisk, out] = paths.map(Path::new);
    match boot::build_image(firmware, kernel, ramdisk, out, log) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("boot: {why}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: boot bios|uefi KERNEL RAMDISK OUT [--log]");
    ExitCode::from(2)
}
