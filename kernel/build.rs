// Links the kernel at a fixed address in the top 2 GiB (the "kernel" code
// model), so user space can own the whole lower half of every address space.
fn main() {
    println!("cargo:rustc-link-arg-bins=--image-base=0xffffffff80000000");
    println!("cargo:rerun-if-changed=build.rs");
}
