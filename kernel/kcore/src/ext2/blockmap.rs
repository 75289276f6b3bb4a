//! Where a file's n-th block is named: the walk from an inode's 15 block
//! pointers through up to three levels of indirect blocks.
//!
//! The first 12 blocks of a file are named in the inode itself. Block 12
//! onwards is named in the single-indirect block, a block full of block
//! numbers (`per` of them: a quarter of the block size); after those come
//! `per * per` through the double-indirect block and `per^3` through the
//! triple. So with 1 KiB blocks a file reaches 12 + 256 + 65,536 +
//! 16,777,216 blocks, about 16 GiB. A zero pointer at any level is a hole:
//! the blocks below it read as zeros and take no room on disk.

use super::layout::{DIND_BLOCK, IND_BLOCK, N_DIRECT, TIND_BLOCK};
use super::{Error, Result};

/// The route to one file block: the inode's pointer slot, then the index
/// to follow in each indirect block on the way down (`depth` of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub slot: usize,
    pub depth: usize,
    pub index: [usize; 3],
}

impl Route {
    /// The indexes to follow, top level first.
    pub fn indexes(&self) -> &[usize] {
        &self.index[..self.depth]
    }
}

/// The route to logical block `n` of a file, with `per` block numbers in
/// an indirect block. EFBIG past the triple-indirect block's reach.
pub fn route(n: u64, per: u64) -> Result<Route> {
    let direct = N_DIRECT as u64;
    if n < direct {
        return Ok(Route {
            slot: n as usize,
            depth: 0,
            index: [0; 3],
        });
    }
    let mut rest = n - direct;
    if rest < per {
        return Ok(Route {
            slot: IND_BLOCK,
            depth: 1,
            index: [rest as usize, 0, 0],
        });
    }
    rest -= per;
    if rest < per * per {
        let index = [(rest / per) as usize, (rest % per) as usize, 0];
        return Ok(Route {
            slot: DIND_BLOCK,
            depth: 2,
            index,
        });
    }
    rest -= per * per;
    if rest < per * per * per {
        let index = [
            (rest / (per * per)) as usize,
            (rest / per % per) as usize,
            (rest % per) as usize,
        ];
        return Ok(Route {
            slot: TIND_BLOCK,
            depth: 3,
            index,
        });
    }
    Err(Error::Sys(abi::Errno::EFBIG))
}

/// How many logical blocks the pointers reach: the largest file's block
/// count.
pub fn reach(per: u64) -> u64 {
    N_DIRECT as u64 + per + per * per + per * per * per
}

/// The number of logical blocks under one pointer at `level` below the
/// inode (0: a data block, 1: an indirect block naming `per` data blocks,
/// ...): how far a walk may skip when it finds a zero there.
pub fn span(level: usize, per: u64) -> u64 {
    per.pow(level as u32)
}

/// The largest file size Linux's ext2 allows for this block size
/// (`ext2_max_size`): the pointers' reach, unless the sectors of a dense
/// file that size, data and indirect blocks together, would overflow
/// `i_blocks`' 32 bits; then the most data blocks whose whole tree fits.
pub fn max_file_size(block_size: u64) -> u64 {
    let per = block_size / 4;
    let direct = N_DIRECT as u64;
    let sector_limit = u64::from(u32::MAX) / (block_size / 512);
    let tree_meta = 1 + (1 + per) + (1 + per + per * per);
    let blocks = if reach(per) + tree_meta <= sector_limit {
        reach(per)
    } else {
        // The meta blocks a dense file of `sector_limit` blocks needs.
        let mut rest = sector_limit - direct - per;
        let mut meta = 1;
        if rest < per * per {
            meta += 1 + rest.div_ceil(per);
        } else {
            meta += 1 + per;
            rest -= per * per;
            meta += 1 + rest.div_ceil(per) + rest.div_ceil(per * per);
        }
        sector_limit - meta
    };
    (blocks * block_size).min(i64::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_cross_each_level_at_its_edge() {
        let per = 256;
        assert_eq!(
            route(0, per).unwrap(),
            Route {
                slot: 0,
                depth: 0,
                index: [0; 3]
            }
        );
        assert_eq!(route(11, per).unwrap().slot, 11);
        assert_eq!(
            route(12, per).unwrap(),
            Route {
                slot: IND_BLOCK,
                depth: 1,
                index: [0, 0, 0]
            }
        );
        assert_eq!(route(12 + 255, per).unwrap().indexes(), &[255]);
        let first_double = 12 + 256;
        assert_eq!(
            route(first_double, per).unwrap(),
            Route {
                slot: DIND_BLOCK,
                depth: 2,
                index: [0, 0, 0]
            }
        );
        assert_eq!(route(first_double + 257, per).unwrap().indexes(), &[1, 1]);
        let first_triple = first_double + 256 * 256;
        assert_eq!(route(first_triple - 1, per).unwrap().indexes(), &[255, 255]);
        assert_eq!(
            route(first_triple, per).unwrap(),
            Route {
                slot: TIND_BLOCK,
                depth: 3,
                index: [0, 0, 0]
            }
        );
        assert_eq!(
            route(first_triple + 65536 + 256 + 1, per)
                .unwrap()
                .indexes(),
            &[1, 1, 1]
        );
        assert_eq!(
            route(reach(per) - 1, per).unwrap().indexes(),
            &[255, 255, 255]
        );
        assert_eq!(route(reach(per), per), Err(Error::Sys(abi::Errno::EFBIG)));
    }

    #[test]
    fn max_sizes_match_linux() {
        // ext2_max_size on Linux: 1 KiB blocks reach 16 GiB and a bit;
        // 4 KiB blocks are capped by i_blocks at about 2 TiB.
        assert_eq!(max_file_size(1024), 17_247_252_480);
        assert_eq!(max_file_size(4096), 2_196_873_666_560);
    }
}
