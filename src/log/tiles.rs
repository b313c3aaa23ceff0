//! The log's static files (C2SP tlog-tiles): `checkpoint`, hash tiles `tile/<L>/<N>[.p/<W>]`
//! and entry bundles `tile/entries/<N>[.p/<W>]`, read from a folder. The tree
//! arithmetic is `tlog_tiles`' (a port of Go's sumdb/tlog); its `Tile::path` is the Go sumdb
//! form (`tile/8/…`), so the C2SP paths are made here.

use std::cell::RefCell;
use std::collections::HashMap;

use tlog_tiles::{HashReader, Tile, TileHashReader, TileReader, HASH_SIZE};

use crate::error::Error;
use crate::log::entry::MAX_ENTRY_BYTES;

/// C2SP fixes the tile height at 8: 256 hashes per full tile.
pub(crate) const HEIGHT: u8 = 8;
pub(crate) const TILE_WIDTH: u64 = 1 << HEIGHT;
const FULL_TILE_BYTES: u64 = TILE_WIDTH * HASH_SIZE as u64;
/// 256 entries of at most 64 KiB each, with their length prefixes.
pub(crate) const MAX_BUNDLE_BYTES: u64 = TILE_WIDTH * (2 + MAX_ENTRY_BYTES as u64);

/// `N` in a tile path: 3-digit groups, all but the last prefixed with `x`.
fn index_path(mut n: u64) -> String {
    let mut s = format!("{:03}", n % 1000);
    while n >= 1000 {
        n /= 1000;
        s = format!("x{:03}/{s}", n % 1000);
    }
    s
}

/// A tile's C2SP path below the log's prefix.
pub(crate) fn tile_path(t: &Tile) -> String {
    let level = if t.is_data() {
        "entries".to_string()
    } else {
        t.level().to_string()
    };
    let width = if u64::from(t.width()) == TILE_WIDTH {
        String::new()
    } else {
        format!(".p/{}", t.width())
    };
    format!("tile/{level}/{}{width}", index_path(t.level_index()))
}

/// Where the log's files are read from.
pub(crate) trait Store: Sync {
    /// The file at `path` below the log, at most `cap` bytes; `None` when it does not exist.
    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, Error>;
    /// How a file of the log is named in messages (its path or URL).
    fn name(&self, path: &str) -> String;
}

/// A log in a folder.
pub(crate) struct DirStore {
    pub(crate) root: std::path::PathBuf,
}

impl Store for DirStore {
    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, Error> {
        let full = self.root.join(path);
        match crate::files::guarded::read_bytes_inside(&self.root, &full, cap) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("reading", full, e)),
        }
    }
    fn name(&self, path: &str) -> String {
        self.root.join(path).display().to_string()
    }
}

/// The tiles of one log as `tlog_tiles` reads them, cached, with the first read error kept
/// (`TileReader` can only say "invalid tile").
pub(crate) struct Tiles<'s> {
    store: &'s dyn Store,
    cache: RefCell<HashMap<Tile, Vec<u8>>>,
    pub(crate) error: RefCell<Option<Error>>,
}

impl<'s> Tiles<'s> {
    pub(crate) fn new(store: &'s dyn Store) -> Self {
        Tiles {
            store,
            cache: RefCell::new(HashMap::new()),
            error: RefCell::new(None),
        }
    }

    fn fail(&self, e: Error) -> tlog_tiles::Error {
        self.error.borrow_mut().get_or_insert(e);
        tlog_tiles::Error::InvalidTile
    }

    /// The tile's bytes: the partial tile of its width, else the full tile cut to it (a log may
    /// drop partial tiles once the full one exists).
    fn read_one(&self, t: &Tile) -> Result<Vec<u8>, Error> {
        if let Some(data) = self.cache.borrow().get(t) {
            return Ok(data.clone());
        }
        let want = t.width() as usize * HASH_SIZE;
        let path = tile_path(t);
        let mut data = self.store.read(&path, FULL_TILE_BYTES)?;
        if data.is_none() && u64::from(t.width()) < TILE_WIDTH {
            let full = Tile::new(HEIGHT, t.level(), t.level_index(), TILE_WIDTH as u32, false);
            data = self
                .store
                .read(&tile_path(&full), FULL_TILE_BYTES)?
                .filter(|d| d.len() as u64 == FULL_TILE_BYTES)
                .map(|mut d| {
                    d.truncate(want);
                    d
                });
        }
        let data = data.ok_or_else(|| {
            Error::input(
                self.store.name(&path),
                None,
                "missing: the checkpoint needs this tile",
            )
        })?;
        if data.len() != want {
            return Err(Error::input(
                self.store.name(&path),
                None,
                format!(
                    "{} bytes, a tile of width {} has {want} (truncated or altered tile)",
                    data.len(),
                    t.width()
                ),
            ));
        }
        self.cache.borrow_mut().insert(*t, data.clone());
        Ok(data)
    }

    /// The tile `t`'s bytes (of its width).
    pub(crate) fn tile(&self, t: &Tile) -> Result<Vec<u8>, Error> {
        self.read_one(t)
    }

    /// The entries of bundle `n` with `width` entries.
    pub(crate) fn bundle(&self, n: u64, width: u32) -> Result<Vec<Vec<u8>>, Error> {
        let t = Tile::new(HEIGHT, 0, n, width, true);
        let path = tile_path(&t);
        let mut data = self.store.read(&path, MAX_BUNDLE_BYTES)?;
        if data.is_none() && u64::from(width) < TILE_WIDTH {
            let full = Tile::new(HEIGHT, 0, n, TILE_WIDTH as u32, true);
            data = self.store.read(&tile_path(&full), MAX_BUNDLE_BYTES)?;
        }
        let data = data.ok_or_else(|| {
            Error::input(
                self.store.name(&path),
                None,
                "missing: the checkpoint needs this entry bundle",
            )
        })?;
        let mut entries = Vec::with_capacity(width as usize);
        let mut rest = data.as_slice();
        while entries.len() < width as usize {
            let Some((len, tail)) = rest.split_first_chunk::<2>() else {
                return Err(Error::input(
                    self.store.name(&path),
                    None,
                    format!(
                        "holds {} entries, the checkpoint needs {width} (truncated bundle)",
                        entries.len()
                    ),
                ));
            };
            let len = u16::from_be_bytes(*len) as usize;
            if tail.len() < len {
                return Err(Error::input(
                    self.store.name(&path),
                    None,
                    format!(
                        "entry {} is cut short (truncated bundle)",
                        n * TILE_WIDTH + entries.len() as u64
                    ),
                ));
            }
            entries.push(tail[..len].to_vec());
            rest = &tail[len..];
        }
        // A full bundle read for a partial one holds more entries; a partial one holds no more.
        if !rest.is_empty()
            && data.len() as u64 <= MAX_BUNDLE_BYTES
            && u64::from(width) == TILE_WIDTH
        {
            return Err(Error::input(
                self.store.name(&path),
                None,
                "bytes after its 256th entry",
            ));
        }
        Ok(entries)
    }
}

impl TileReader for Tiles<'_> {
    fn height(&self) -> u8 {
        HEIGHT
    }
    fn read_tiles(&self, tiles: &[Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        tiles
            .iter()
            .map(|t| self.read_one(t).map_err(|e| self.fail(e)))
            .collect()
    }
    fn save_tiles(&self, _tiles: &[Tile], _data: &[Vec<u8>]) {}
}

/// The hashes of the tree of a verified checkpoint, read from its tiles and authenticated
/// against its root (`TileHashReader`, which must not be asked about an empty tree).
pub(crate) struct TreeReader<'a> {
    size: u64,
    inner: TileHashReader<'a>,
}

impl<'a> TreeReader<'a> {
    pub(crate) fn new(size: u64, root: tlog_tiles::Hash, tiles: &'a Tiles<'a>) -> Self {
        TreeReader {
            size,
            inner: TileHashReader::new(size, root, tiles),
        }
    }
}

impl HashReader for TreeReader<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        if self.size == 0 {
            return Err(tlog_tiles::Error::IndexesNotInTree);
        }
        self.inner.read_hashes(indexes)
    }
}

/// Hashes of a tree being appended to: the new ones in memory over the stored tree.
pub(crate) struct Overlay<'r> {
    pub(crate) base: &'r dyn HashReader,
    pub(crate) new: HashMap<u64, tlog_tiles::Hash>,
}

impl HashReader for Overlay<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        let missing: Vec<u64> = indexes
            .iter()
            .copied()
            .filter(|i| !self.new.contains_key(i))
            .collect();
        let mut old = if missing.is_empty() {
            Vec::new()
        } else {
            self.base.read_hashes(&missing)?
        }
        .into_iter();
        Ok(indexes
            .iter()
            .map(|i| match self.new.get(i) {
                Some(h) => *h,
                None => old.next().unwrap_or(tlog_tiles::EMPTY_HASH),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_paths_are_c2sp_s() {
        let t = |l, n, w, data| tile_path(&Tile::new(HEIGHT, l, n, w, data));
        assert_eq!(t(0, 5, 256, false), "tile/0/005");
        assert_eq!(t(0, 1000, 256, false), "tile/0/x001/000");
        assert_eq!(t(1, 1_234_067, 256, false), "tile/1/x001/x234/067");
        assert_eq!(t(0, 273, 112, false), "tile/0/273.p/112");
        assert_eq!(t(0, 273, 112, true), "tile/entries/273.p/112");
    }

    #[test]
    fn the_tiles_of_a_size_are_the_spec_s_example() {
        // tlog-tiles: size 70,000 is 273 full level-0 tiles and a partial of 112, one full
        // level-1 tile and a partial of 17, and a level-2 partial of 1.
        let tiles = Tile::new_tiles(HEIGHT, 0, 70_000);
        let partial: Vec<String> = tiles
            .iter()
            .filter(|t| u64::from(t.width()) < TILE_WIDTH)
            .map(tile_path)
            .collect();
        assert_eq!(
            partial,
            ["tile/0/273.p/112", "tile/1/001.p/17", "tile/2/000.p/1"]
        );
        assert_eq!(tiles.iter().filter(|t| t.level() == 0).count(), 274);
    }
}
