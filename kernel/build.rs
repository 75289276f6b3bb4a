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
fn main() {
    println!("cargo:rustc-link-arg-bins=--image-base=0xffffffff80000000");
    println!("cargo:rustc-link-arg-bins=-zseparate-code");
    println!("cargo:rerun-if-changed=build.rs");
}
