//! What the CPU says about itself through CPUID, for `/proc/cpuinfo`.
//!
//! The flag names are Linux's (`arch/x86/include/asm/cpufeatures.h`), for
//! the bits a reader of this kernel meets: the ones it uses (NX, SMEP,
//! SMAP, RDRAND, RDSEED, FSGSBASE, APIC, TSC) and the common instruction
//! sets.

use alloc::string::String;
use alloc::vec::Vec;
use core::arch::x86_64::{__cpuid, __cpuid_count};

pub struct Description {
    pub vendor: String,
    pub brand: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub flags: Vec<&'static str>,
}

/// (leaf, register, bit, name); register 0 EDX, 1 ECX, 2 EBX.
const FLAGS: &[(u32, u8, u32, &str)] = &[
    (1, 0, 0, "fpu"),
    (1, 0, 4, "tsc"),
    (1, 0, 5, "msr"),
    (1, 0, 6, "pae"),
    (1, 0, 8, "cx8"),
    (1, 0, 9, "apic"),
    (1, 0, 11, "sep"),
    (1, 0, 13, "pge"),
    (1, 0, 15, "cmov"),
    (1, 0, 16, "pat"),
    (1, 0, 19, "clflush"),
    (1, 0, 23, "mmx"),
    (1, 0, 24, "fxsr"),
    (1, 0, 25, "sse"),
    (1, 0, 26, "sse2"),
    (0x8000_0001, 0, 11, "syscall"),
    (0x8000_0001, 0, 20, "nx"),
    (0x8000_0001, 0, 26, "pdpe1gb"),
    (0x8000_0001, 0, 27, "rdtscp"),
    (0x8000_0001, 0, 29, "lm"),
    (1, 1, 0, "pni"),
    (1, 1, 1, "pclmulqdq"),
    (1, 1, 9, "ssse3"),
    (1, 1, 12, "fma"),
    (1, 1, 13, "cx16"),
    (1, 1, 19, "sse4_1"),
    (1, 1, 20, "sse4_2"),
    (1, 1, 21, "x2apic"),
    (1, 1, 22, "movbe"),
    (1, 1, 23, "popcnt"),
    (1, 1, 25, "aes"),
    (1, 1, 26, "xsave"),
    (1, 1, 28, "avx"),
    (1, 1, 29, "f16c"),
    (1, 1, 30, "rdrand"),
    (1, 1, 31, "hypervisor"),
    (7, 2, 0, "fsgsbase"),
    (7, 2, 3, "bmi1"),
    (7, 2, 5, "avx2"),
    (7, 2, 7, "smep"),
    (7, 2, 8, "bmi2"),
    (7, 2, 9, "erms"),
    (7, 2, 18, "rdseed"),
    (7, 2, 19, "adx"),
    (7, 2, 20, "smap"),
    (7, 2, 23, "clflushopt"),
    (7, 2, 29, "sha_ni"),
];

fn text(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    String::from_utf8_lossy(&bytes)
        .trim_matches(|c: char| c == '\0' || c == ' ')
        .into()
}

/// Whether a hypervisor runs this machine (CPUID leaf 1, ECX bit 31, which
/// real processors leave clear and QEMU, KVM and the others set).
pub fn under_hypervisor() -> bool {
    __cpuid(1).ecx & (1 << 31) != 0
}

pub fn describe() -> Description {
    let leaf0 = __cpuid(0);
    let max_ext = __cpuid(0x8000_0000).eax;
    let leaf1 = __cpuid(1);
    let brand = if max_ext >= 0x8000_0004 {
        let words: Vec<u32> = (0x8000_0002..=0x8000_0004)
            .flat_map(|leaf| {
                let r = __cpuid(leaf);
                [r.eax, r.ebx, r.ecx, r.edx]
            })
            .collect();
        text(&words)
    } else {
        String::from("unknown")
    };
    // Family and model with their extended fields, as the SDM adds them.
    let base_family = (leaf1.eax >> 8) & 0xf;
    let family = if base_family == 0xf {
        base_family + ((leaf1.eax >> 20) & 0xff)
    } else {
        base_family
    };
    let model = if base_family == 0x6 || base_family == 0xf {
        ((leaf1.eax >> 4) & 0xf) | (((leaf1.eax >> 16) & 0xf) << 4)
    } else {
        (leaf1.eax >> 4) & 0xf
    };
    let flags = FLAGS
        .iter()
        .filter(|&&(leaf, reg, bit, _)| {
            if (leaf >= 0x8000_0000 && leaf > max_ext) || (leaf < 0x8000_0000 && leaf > leaf0.eax) {
                return false;
            }
            let r = __cpuid_count(leaf, 0);
            let value = match reg {
                0 => r.edx,
                1 => r.ecx,
                _ => r.ebx,
            };
            value & (1 << bit) != 0
        })
        .map(|&(.., name)| name)
        .collect();
    Description {
        vendor: text(&[leaf0.ebx, leaf0.edx, leaf0.ecx]),
        brand,
        family,
        model,
        stepping: leaf1.eax & 0xf,
        flags,
    }
}

/// AT_HWCAP, what exec hands every program: CPUID leaf 1's EDX, the
/// instruction-set bits Linux gives as x86's `ELF_HWCAP`. Every CPU of the
/// machine says the same.
pub fn hwcap() -> u64 {
    u64::from(__cpuid(1).edx)
}
