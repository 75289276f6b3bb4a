//! PCI configuration space through the legacy ports: 0xCF8 takes the
//! address of a 32-bit register (bus, device, function, offset;
//! `kcore::pci::Address::config_address`), 0xCFC then reads or writes
//! it. This is configuration mechanism #1, which every PC chipset has,
//! QEMU's i440FX and Q35 included.
//!
//! The two steps must not interleave with another CPU's, and nothing here
//! takes a lock for them: the configuration space is touched only at boot,
//! on the boot CPU, before the other CPUs start (`pci::init` and the
//! drivers' set-up). Each access checks that this still holds.

use kcore::pci::Address;
use x86_64::instructions::port::Port;

const ADDRESS_PORT: u16 = 0xcf8;
const DATA_PORT: u16 = 0xcfc;

fn boot_cpu_alone() {
    assert_eq!(
        super::percpu::online(),
        1,
        "PCI configuration space used after the other CPUs started"
    );
}

/// Reads the 32-bit register at `offset` (rounded down to 4) of `at`.
pub fn read32(at: Address, offset: u8) -> u32 {
    boot_cpu_alone();
    // SAFETY: 0xCF8/0xCFC are the PC's configuration ports; selecting and
    // reading a register has no effect on memory, and no other CPU runs.
    unsafe {
        Port::<u32>::new(ADDRESS_PORT).write(at.config_address(offset));
        Port::<u32>::new(DATA_PORT).read()
    }
}

/// Writes the 32-bit register at `offset` (rounded down to 4) of `at`.
pub fn write32(at: Address, offset: u8, value: u32) {
    boot_cpu_alone();
    // SAFETY: as in `read32`; what the write does to the device (turning
    // decoding or bus mastering on, sizing a BAR) is the caller's intent,
    // and no memory the kernel uses is a BAR until a driver maps one.
    unsafe {
        Port::<u32>::new(ADDRESS_PORT).write(at.config_address(offset));
        Port::<u32>::new(DATA_PORT).write(value);
    }
}
