//! Memory pages of the large buffers a heightmap import fills: faulting
//! them in ahead of the thread that fills them, and reading the file
//! through the page cache rather than into a copy.
//!
//! Under a hypervisor, faulting in a fresh page costs about 2 µs of the
//! thread that first writes it: a 4097² map's rows, samples, heights and
//! the terrain hierarchy's room after them are 180 MB, 90 ms of faults,
//! more than the 77 ms that inflating its image data takes. So one thread
//! inflates while the other faults the pages in ([`populate`]), and the
//! file is mapped ([`FileBytes`]) instead of read into 31 MB of fresh
//! pages of our own.
#![allow(unsafe_code)]

use std::fs::File;
use std::ops::Deref;

/// A file's bytes: mapped from the page cache where the system allows it,
/// read into memory otherwise.
pub enum FileBytes {
    /// The file mapped read-only.
    #[cfg(unix)]
    Mapped(memmap2::Mmap),
    /// The file's bytes, read.
    Read(Vec<u8>),
}

impl FileBytes {
    /// The bytes of `file`, at most `limit` of them. A scene's inputs are
    /// not expected to change while it renders; one that shrinks while
    /// mapped would end the process (SIGBUS), as it would for any program
    /// that maps its input.
    pub fn of(mut file: File, limit: u64) -> std::io::Result<FileBytes> {
        #[cfg(unix)]
        {
            let len = file.metadata()?.len();
            if len > 0 && len <= limit {
                // SAFETY: the mapping is read-only and private to this
                // process; see the note above on files that change.
                if let Ok(map) = unsafe { memmap2::MmapOptions::new().len(len as usize).map(&file) }
                {
                    return Ok(FileBytes::Mapped(map));
                }
            }
        }
        use std::io::Read;
        let mut bytes = Vec::new();
        (&mut file).take(limit).read_to_end(&mut bytes)?;
        Ok(FileBytes::Read(bytes))
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(unix)]
            FileBytes::Mapped(map) => map,
            FileBytes::Read(bytes) => bytes,
        }
    }
}

/// A region of memory whose pages [`populate`] faults in; made from a
/// buffer that another thread may be filling meanwhile.
#[derive(Clone, Copy)]
pub struct Region {
    start: usize,
    len: usize,
}

impl Region {
    /// The pages under `items`.
    pub fn of<T>(items: &mut [T]) -> Region {
        Region {
            start: items.as_mut_ptr() as usize,
            len: std::mem::size_of_val(items),
        }
    }
}

/// Faults in the whole pages of `region` as writable, without writing
/// them (Linux's `MADV_POPULATE_WRITE`): their contents stay what they
/// are, so another thread may be filling them meanwhile, and the pages it
/// reaches first are simply already there. False where the system cannot
/// (before Linux 5.14, or elsewhere): the pages then fault in on first
/// write, as they would have.
pub fn populate(region: Region) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = if page > 0 { page as usize } else { 4096 };
        let begin = region.start.next_multiple_of(page);
        let end = (region.start + region.len) / page * page;
        if end <= begin {
            return true;
        }
        // SAFETY: [begin, end) lies within one live allocation (the
        // caller's buffer), and MADV_POPULATE_WRITE changes no byte of it.
        unsafe {
            libc::madvise(
                begin as *mut libc::c_void,
                end - begin,
                libc::MADV_POPULATE_WRITE,
            ) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = region;
        false
    }
}

/// Faults in every page of `items` now rather than when they are filled:
/// [`populate`]d where the system can, otherwise each page written (with
/// its zero, through `black_box`: a zero stored to freshly zeroed memory
/// is one the compiler may drop).
pub fn fault_in<T: Copy + Default>(items: &mut [T]) {
    if populate(Region::of(items)) {
        return;
    }
    const PAGE_BYTES: usize = 4096;
    let per_page = (PAGE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    for page in items.chunks_mut(per_page) {
        *std::hint::black_box(&mut page[0]) = T::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn populating_keeps_what_the_pages_hold() {
        let mut bytes: Vec<u8> = (0..3 * 4096 + 100).map(|k| (k % 251) as u8).collect();
        let before = bytes.clone();
        populate(Region::of(&mut bytes[10..]));
        assert_eq!(bytes, before);
        let mut words = vec![7u32; 5000];
        fault_in(&mut words);
        assert!(words.iter().all(|&w| w == 7));
    }

    #[test]
    fn a_file_reads_the_same_mapped_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let data: Vec<u8> = (0..10_000).map(|k| (k * 7 % 256) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mapped = FileBytes::of(File::open(&path).unwrap(), 1 << 20).unwrap();
        assert_eq!(&*mapped, &data[..]);
        // Over the limit: read, up to the limit.
        let read = FileBytes::of(File::open(&path).unwrap(), 100).unwrap();
        assert!(matches!(read, FileBytes::Read(_)));
        assert_eq!(&*read, &data[..100]);
        // An empty file cannot be mapped; it reads as empty.
        std::fs::write(&path, b"").unwrap();
        assert!(FileBytes::of(File::open(&path).unwrap(), 1 << 20)
            .unwrap()
            .is_empty());
    }
}
