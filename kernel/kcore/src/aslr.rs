//! Address-space layout randomisation: how far exec moves each part of a
//! new program's address space, with Linux x86_64's amounts
//! (`arch/x86/mm/mmap.c`, `fs/binfmt_elf.c`), so that an attack that needs
//! an address (a return into libc, a stack buffer's place) must guess it.
//!
//! The level is `/proc/sys/kernel/randomize_va_space`'s, as on Linux:
//!
//! | level | what moves |
//! |---|---|
//! | 0 | nothing: every run of a program sees the same addresses |
//! | 1 | the stack, the mmap region (so the loader and the libraries) and a position-independent program's base |
//! | 2 | those, and the start of the heap (brk) |
//!
//! A process whose personality has `ADDR_NO_RANDOMIZE` (setarch -R, and
//! GDB for every program it starts) gets level 0 whatever the setting.
//!
//! The amounts, each a whole number of pages chosen uniformly:
//!
//! | part | moves | Linux's name |
//! |---|---|---|
//! | stack top | down, below 16 GiB (22 bits of pages), then the first stack pointer below 8 KiB more, 16-byte aligned | `STACK_RND_MASK`, `arch_align_stack` |
//! | mmap region's top | down, below 1 TiB (28 bits of pages) | `mmap_rnd_bits` |
//! | PIE base | up, below 1 TiB (28 bits of pages) | `arch_mmap_rnd` |
//! | heap start | up, below 32 MiB | `randomize_page` |

use crate::elf::PAGE_SIZE;

/// The highest level.
pub const LEVEL_MAX: u32 = 2;
/// Linux's default, and this kernel's: everything moves.
pub const LEVEL_DEFAULT: u32 = 2;
/// The personality flag that turns randomisation off for one process
/// (and the programs it runs).
pub const ADDR_NO_RANDOMIZE: u32 = 0x0004_0000;
/// The personality flags exec clears for a set-user-ID or set-group-ID
/// program (Linux's `PER_CLEAR_ON_SETID`): `ADDR_NO_RANDOMIZE`,
/// `MMAP_PAGE_ZERO` and `ADDR_COMPAT_LAYOUT`, each a way to place memory
/// where an attacker wants it.
pub const PER_CLEAR_ON_SETID: u32 = ADDR_NO_RANDOMIZE | 0x0010_0000 | 0x0020_0000;

const STACK_PAGES_BITS: u32 = 22;
const MMAP_PAGES_BITS: u32 = 28;
const STACK_SP_RANGE: u64 = 8192;
const BRK_RANGE: u64 = 32 << 20;

/// The most each part moves, in bytes (for the layout's own checks).
pub const STACK_MAX_SHIFT: u64 = (PAGE_SIZE << STACK_PAGES_BITS) + STACK_SP_RANGE;
pub const MMAP_MAX_SHIFT: u64 = PAGE_SIZE << MMAP_PAGES_BITS;
pub const PIE_MAX_SHIFT: u64 = PAGE_SIZE << MMAP_PAGES_BITS;
pub const BRK_MAX_SHIFT: u64 = BRK_RANGE;

/// How far one exec moves each part, in bytes: all zero at level 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offsets {
    /// The stack's top moves down by this many bytes (whole pages).
    pub stack: u64,
    /// The first stack pointer moves down by this much more (a multiple
    /// of 16 below 8 KiB).
    pub stack_sp: u64,
    /// The top of the mmap region moves down (whole pages).
    pub mmap: u64,
    /// A position-independent program's base moves up (whole pages).
    pub pie: u64,
    /// The heap's start moves up past the program's end (whole pages).
    pub brk: u64,
}

/// The level exec uses for a process with `personality` when the setting
/// is `setting`.
pub fn level(setting: u32, personality: u32) -> u32 {
    if personality & ADDR_NO_RANDOMIZE != 0 {
        0
    } else {
        setting.min(LEVEL_MAX)
    }
}

/// The offsets for one exec at `level`, drawing on `random` (uniform 64-bit
/// values from the kernel's generator).
pub fn offsets(level: u32, mut random: impl FnMut() -> u64) -> Offsets {
    if level == 0 {
        return Offsets::default();
    }
    let mut pages = |bits: u32| (random() & ((1 << bits) - 1)) * PAGE_SIZE;
    let stack = pages(STACK_PAGES_BITS);
    let mmap = pages(MMAP_PAGES_BITS);
    let pie = pages(MMAP_PAGES_BITS);
    let stack_sp = (random() % STACK_SP_RANGE) & !15;
    let brk = if level >= 2 {
        (random() % (BRK_RANGE / PAGE_SIZE)) * PAGE_SIZE
    } else {
        0
    };
    Offsets {
        stack,
        stack_sp,
        mmap,
        pie,
        brk,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generator(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn level_0_and_no_randomize_move_nothing() {
        assert_eq!(offsets(0, generator(1)), Offsets::default());
        assert_eq!(level(2, ADDR_NO_RANDOMIZE), 0);
        assert_eq!(level(2, 0), 2);
        assert_eq!(level(7, 0), LEVEL_MAX);
    }

    #[test]
    fn each_part_moves_within_its_range_and_in_pages() {
        let mut random = generator(0x1234_5678);
        for _ in 0..10_000 {
            let o = offsets(2, &mut random);
            for (what, by, most) in [
                ("stack", o.stack, STACK_MAX_SHIFT - STACK_SP_RANGE),
                ("mmap", o.mmap, MMAP_MAX_SHIFT),
                ("pie", o.pie, PIE_MAX_SHIFT),
                ("brk", o.brk, BRK_MAX_SHIFT),
            ] {
                assert!(by < most && by.is_multiple_of(PAGE_SIZE), "{what} {by:#x}");
            }
            assert!(o.stack_sp < STACK_SP_RANGE && o.stack_sp.is_multiple_of(16));
        }
    }

    #[test]
    fn level_1_leaves_the_heap_and_two_execs_differ() {
        let mut random = generator(99);
        let (a, b) = (offsets(1, &mut random), offsets(1, &mut random));
        assert_eq!((a.brk, b.brk), (0, 0));
        assert!(a.stack != b.stack && a.mmap != b.mmap && a.pie != b.pie);
        // Over many execs, the high and the low bits of each part both change.
        let many: Vec<Offsets> = (0..64).map(|_| offsets(2, &mut random)).collect();
        for part in [|o: &Offsets| o.mmap, |o: &Offsets| o.brk] {
            let or = many.iter().fold(0, |acc, o| acc | part(o));
            let and = many.iter().fold(u64::MAX, |acc, o| acc & part(o));
            assert_eq!(and, 0);
            assert!(or & PAGE_SIZE != 0 && or > MMAP_MAX_SHIFT.min(BRK_MAX_SHIFT) / 4);
        }
    }
}
