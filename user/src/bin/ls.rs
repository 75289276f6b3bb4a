//! /bin/ls [-l] [PATH...]: list directories (names; with -l, type, size,
//! and where a symbolic link points).
#![no_std]
#![no_main]

use abi::types::{DIRENT64_NAME_OFFSET, O_DIRECTORY, O_RDONLY, S_IFDIR, S_IFMT};
use libc_lite::{eprintln, println, sys};

libc_lite::entry!(run);

fn type_char(mode: u32) -> char {
    match mode & S_IFMT {
        S_IFDIR => 'd',
        abi::types::S_IFCHR => 'c',
        abi::types::S_IFIFO => 'p',
        abi::types::S_IFLNK => 'l',
        _ => '-',
    }
}

fn list(path: &str, long: bool) -> Result<(), libc_lite::Errno> {
    let st = sys::stat(path)?;
    if st.st_mode & S_IFMT != S_IFDIR {
        if long {
            println!("{} {:>8} {path}", type_char(st.st_mode), st.st_size);
        } else {
            println!("{path}");
        }
        return Ok(());
    }
    let fd = sys::open(path, O_RDONLY | O_DIRECTORY, 0)?;
    let mut buf = [0u8; 2048];
    loop {
        let n = match sys::getdents64(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                let _ = sys::close(fd);
                return Err(e);
            }
        };
        let mut at = 0;
        while at < n {
            let reclen = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name_bytes = &buf[at + DIRENT64_NAME_OFFSET..at + reclen];
            let len = name_bytes
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(name_bytes.len());
            let name = core::str::from_utf8(&name_bytes[..len]).unwrap_or("?");
            at += reclen;
            if name == "." || name == ".." {
                continue;
            }
            if long {
                let full = alloc_path(path, name);
                let mut target = [0u8; 256];
                match sys::lstat(full.as_str()) {
                    Ok(st) if st.st_mode & S_IFMT == abi::types::S_IFLNK => {
                        let to = sys::readlink(full.as_str(), &mut target).unwrap_or("?");
                        println!("l {:>8} {name} -> {to}", st.st_size)
                    }
                    Ok(st) => println!("{} {:>8} {name}", type_char(st.st_mode), st.st_size),
                    Err(_) => println!("? {:>8} {name}", "?"),
                }
            } else {
                println!("{name}");
            }
        }
    }
    sys::close(fd)
}

extern crate alloc;
fn alloc_path(dir: &str, name: &str) -> alloc::string::String {
    if dir.ends_with('/') {
        alloc::format!("{dir}{name}")
    } else {
        alloc::format!("{dir}/{name}")
    }
}

fn run() -> i32 {
    let mut long = false;
    let mut paths = alloc::vec::Vec::new();
    for arg in libc_lite::env::args().skip(1) {
        match arg {
            "-l" => long = true,
            _ => paths.push(arg),
        }
    }
    if paths.is_empty() {
        paths.push(".");
    }
    let mut status = 0;
    for path in paths {
        if let Err(e) = list(path, long) {
            eprintln!("ls: {path}: {}", e.message());
            status = 1;
        }
    }
    status
}
