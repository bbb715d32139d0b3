//! Offset indexes. The input is a data file and an index file (the first two
//! bytes give the index's length): the index, read as native, DALI and raw-offset files, is
//! accepted or rejected without a panic, and an accepted one fetches every
//! record without one. An index built from the data writes and reads back to
//! the same offsets in every format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recordwire::frame::Framing;
use recordwire::index::Index;
use recordwire_fuzz::{index_formats_round_trip, use_index};

fuzz_target!(|input: &[u8]| {
    let Some((len, rest)) = input.split_first_chunk::<2>() else {
        return;
    };
    let (index, data) = rest.split_at((u16::from_le_bytes(*len) as usize).min(rest.len()));
    for framing in [Framing::TfRecord, Framing::OfRecord] {
        use_index(Index::open_native(index.to_vec().into(), data), data);
        use_index(Index::read_dali(index, data, framing), data);
        use_index(Index::read_lirs(index, data, framing), data);
        if let Ok(built) = Index::build(data, framing, true) {
            index_formats_round_trip(&built, data);
        }
    }
});
