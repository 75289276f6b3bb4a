// Linked like the other user programs, at 0x400000.
fn main() {
    println!("cargo:rustc-link-arg-bins=--image-base=0x400000");
    println!("cargo:rerun-if-changed=build.rs");
}
