//! The `gz_index` target: a checkpoint index built over any bytes read as a
//! GZIP or ZLIB file must never panic, and when it builds, every record it
//! reads by id must be the record the streaming reader gives, from any
//! cache state, and its index file must reopen equal.

use bytes::Bytes;
use recordwire::frame::{Framing, ReadOptions};
use recordwire::index::{GzCache, GzIndex};
use recordwire::io::{Compression, OpenOptions, RecordFile};

/// The first byte picks the checkpoint spacing (1 byte to 8 MiB); the rest
/// is the file, tried as GZIP and as ZLIB.
pub fn gz_index(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let spacing = 1u64 << (first % 24);
    let bytes = Bytes::copy_from_slice(rest);
    for compression in [Compression::Gzip, Compression::Zlib] {
        let Ok(index) = GzIndex::build(&bytes, compression, Framing::TfRecord, spacing, true)
        else {
            continue;
        };
        // The build checked the whole stream, trailers and frames: the
        // whole-file reader must read the same records.
        let options = OpenOptions::default()
            .with_compression(compression)
            .with_framing(Some(Framing::TfRecord));
        let file = RecordFile::from_bytes(bytes.clone(), "fuzz", &options);
        let streamed: Vec<&[u8]> = file
            .records()
            .map(|r| r.expect("the index build checked every frame").data)
            .collect();
        assert_eq!(streamed.len() as u64, index.len());
        let opts = ReadOptions::default();
        let mut cache = GzCache::new();
        for (i, want) in streamed.iter().enumerate() {
            let got = index
                .get(&bytes, i as u64, &opts, &mut cache)
                .expect("valid");
            assert_eq!(got.map(|r| r.data), Some(*want), "record {i} in order");
        }
        let mut cache = GzCache::new();
        for (i, want) in streamed.iter().enumerate().rev() {
            let got = index
                .get(&bytes, i as u64, &opts, &mut cache)
                .expect("valid");
            assert_eq!(got.map(|r| r.data), Some(*want), "record {i} backwards");
        }
        let mut native = Vec::new();
        index.write_native(&mut native).expect("to memory");
        let reopened =
            GzIndex::open_native(Bytes::from(native), &bytes).expect("its own index file");
        assert_eq!(reopened, index);
    }
}
