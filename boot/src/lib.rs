//! Disk images for the kernel.
//!
//! The `bootloader` crate carries the BIOS and UEFI boot stages (built by its
//! build script with the pinned nightly) and writes them, the kernel ELF and
//! the ramdisk into a bootable disk image. This crate is the only place that
//! knows about it, so xtask just asks for "a BIOS image of this kernel".

use std::path::Path;

/// Which firmware the image is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Firmware {
    Bios,
    Uefi,
}

/// Writes a bootable disk image of `kernel` with `ramdisk` to `out`. The
/// bootloader logs each step of loading the kernel (some 25 lines) on the
/// serial port, before the kernel's own first line, only if `log` is set.
pub fn build_image(
    firmware: Firmware,
    kernel: &Path,
    ramdisk: &Path,
    out: &Path,
    log: bool,
) -> Result<(), String> {
    let mut config = bootloader::BootConfig::default();
    config.serial_logging = log;
    config.frame_buffer_logging = log;
    let result = match firmware {
        Firmware::Bios => bootloader::BiosBoot::new(kernel)
            .set_ramdisk(ramdisk)
            .set_boot_config(&config)
            .create_disk_image(out),
        Firmware::Uefi => bootloader::UefiBoot::new(kernel)
            .set_ramdisk(ramdisk)
            .set_boot_config(&config)
            .create_disk_image(out),
    };
    result.map_err(|e| format!("cannot create {firmware:?} image {}: {e:#}", out.display()))
}
