// Links the kernel at a fixed address in the top 2 GiB (the "kernel" code
// model), so user space can own the whole lower half of every address space.
//
// `-z separate-code` starts the text segment on a file page of its own and
// the next segment on a fresh one. The bootloader maps the ELF's file pages
// directly, so without it the last page of `.text` and the first page of
// `.data` were one physical frame, mapped executable at one address and
// writable at the other: W^X broken, and under QEMU every write to that data
// (the process-table lock lives there) hit a page of translated code.
// `selftest: no_frame_is_both_writable_and_executable` checks the result.
//
// It also builds the vDSO (kernel/vdso), which the kernel carries as bytes
// (`include_bytes!` in src/vdso.rs): cargo builds the crate, a static
// library, for this target as position-independent code, and rust-lld,
// the linker this target already uses, makes it a shared object with
// kernel/vdso/vdso.lds. Then the result is checked for what a vDSO may not
// have: any relocation, or a writable segment.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rustc-link-arg-bins=--image-base=0xffffffff80000000");
    println!("cargo:rustc-link-arg-bins=-zseparate-code");
    println!("cargo:rerun-if-changed=build.rs");
    build_vdso();
}

fn build_vdso() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    for watched in [
        "vdso/src",
        "vdso/vdso.lds",
        "vdso/Cargo.toml",
        "kcore/src/vdso.rs",
        "abi/src",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            manifest.join(watched).display()
        );
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| String::from("cargo"));
    let target_dir = out.join("vdso-target");
    // A cargo of its own, with its own target directory (the outer one is
    // locked) and flags of its own: position-independent, small code model
    // (the vDSO lives in the lower half), and no frame-pointer rule from
    // .cargo/config.toml's kernel flags. Whatever wrapper the outer build
    // runs under (clippy) is not the vDSO's business.
    let status = Command::new(&cargo)
        .current_dir(manifest.join("vdso"))
        .args(["build", "--quiet", "--release", "--package", "vdso"])
        .args(["--target", "x86_64-unknown-none"])
        .arg("--target-dir")
        .arg(&target_dir)
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            [
                "-Crelocation-model=pic",
                "-Ccode-model=small",
                "-Cpanic=abort",
            ]
            .join("\x1f"),
        )
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("run cargo for the vDSO");
    assert!(status.success(), "building the vDSO failed");
    let lib = target_dir.join("x86_64-unknown-none/release/libvdso.a");
    let image = out.join("vdso.so");
    let symbols = [
        "__vdso_clock_gettime",
        "__vdso_gettimeofday",
        "__vdso_time",
        "__vdso_getcpu",
        "__vdso_clock_getres",
    ];
    let mut link = Command::new(rust_lld());
    link.args([
        "-flavor",
        "gnu",
        "-shared",
        "--gc-sections",
        "--no-undefined",
    ])
    .args([
        "--hash-style=both",
        "-z",
        "max-page-size=4096",
        "-z",
        "noexecstack",
    ])
    .args([
        "-soname",
        "linux-vdso.so.1",
        "--build-id=none",
        "--strip-debug",
    ])
    .arg("-T")
    .arg(manifest.join("vdso/vdso.lds"));
    for symbol in symbols {
        link.args(["-u", symbol]);
    }
    let status = link
        .arg("-o")
        .arg(&image)
        .arg(&lib)
        .status()
        .expect("run rust-lld for the vDSO");
    assert!(status.success(), "linking the vDSO failed");
    check_vdso(&std::fs::read(&image).unwrap());
}

/// rust-lld from the toolchain that runs this build.
fn rust_lld() -> PathBuf {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| String::from("rustc"));
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("ask rustc for its sysroot");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let host = std::env::var("HOST").unwrap();
    let lld = sysroot.join("lib/rustlib").join(host).join("bin/rust-lld");
    assert!(Path::new(&lld).exists(), "no rust-lld at {}", lld.display());
    lld
}

/// Refuses a vDSO with relocations (SHT_RELA, SHT_REL sections) or a
/// writable segment (PF_W): every process shares its frames, unchanged.
fn check_vdso(image: &[u8]) {
    let word = |at: usize, len: usize| -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..len].copy_from_slice(&image[at..at + len]);
        u64::from_le_bytes(bytes)
    };
    assert_eq!(&image[..4], b"\x7fELF", "the vDSO is no ELF");
    let (phoff, phnum) = (word(0x20, 8) as usize, word(0x38, 2) as usize);
    for i in 0..phnum {
        let flags = word(phoff + i * 56 + 4, 4);
        assert_eq!(flags & 2, 0, "the vDSO has a writable segment");
    }
    let (shoff, shnum) = (word(0x28, 8) as usize, word(0x3c, 2) as usize);
    for i in 0..shnum {
        let kind = word(shoff + i * 64 + 4, 4);
        assert!(kind != 4 && kind != 9, "the vDSO has relocations");
    }
}
