//! /bin/mount: with no arguments, the mounts (/proc/mounts); else
//! `mount [-t TYPE] [-o OPTIONS] SOURCE DIR` mounts SOURCE on DIR
//! (fs/mount.rs). TYPE defaults to ext3 for a device, tmpfs otherwise;
//! OPTIONS are `ro`, `bind`, and what the file system takes (`mode=`).
#![no_std]
#![no_main]

extern crate alloc;

use abi::types::{MS_BIND, MS_RDONLY};
use alloc::string::String;
use alloc::vec::Vec;
use libc_lite::{eprintln, print, sys};

libc_lite::entry!(run);

fn run() -> i32 {
    let mut args = libc_lite::env::args().skip(1);
    let (mut kind, mut options) = (None, String::new());
    let mut names = Vec::new();
    while let Some(arg) = args.next() {
        match arg {
            "-t" => kind = args.next(),
            "-o" => options = String::from(args.next().unwrap_or("")),
            _ => names.push(arg),
        }
    }
    if names.is_empty() && kind.is_none() {
        return match sys::read_file("/proc/mounts") {
            Ok(text) => {
                print!("{}", String::from_utf8_lossy(&text));
                0
            }
            Err(e) => {
                eprintln!("mount: /proc/mounts: {}", e.message());
                1
            }
        };
    }
    let [source, dir] = names[..] else {
        eprintln!("usage: mount [-t TYPE] [-o ro,bind,...] SOURCE DIR");
        return 2;
    };
    let mut flags = 0;
    let mut data = Vec::new();
    for option in options.split(',').filter(|o| !o.is_empty()) {
        match option {
            "ro" => flags |= MS_RDONLY,
            "rw" => flags &= !MS_RDONLY,
            "bind" => flags |= MS_BIND,
            other => data.push(other),
        }
    }
    let kind = kind.unwrap_or(if source.starts_with("/dev/") {
        "ext3"
    } else {
        "tmpfs"
    });
    let data = data.join(",");
    let data = (!data.is_empty()).then_some(data.as_str());
    match sys::mount(source, dir, kind, flags, data) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mount: {source} on {dir}: {}", e.message());
            1
        }
    }
}
