// Linked like the other user programs, at 0x400000.
fn main() {
    println!("cargo:rustc-link-arg-bins=--image-base=0x400000");
    // Text on file pages of its own, as the kernel (see kernel/build.rs).
    println!("cargo:rustc-link-arg-bins=-zseparate-code");
    println!("cargo:rerun-if-changed=build.rs");
}
