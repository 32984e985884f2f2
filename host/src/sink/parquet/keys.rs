//! The string columns of a row group written from their dictionary keys: ttprof's batches
//! carry every string column as keys into an array of the profile's strings (labels, ops,
//! RISC names, mark kinds), so the Parquet dictionary page and the `RLE_DICTIONARY` index
//! page are built here from the keys, without hashing every row's string (what arrow-rs's
//! writer does for a dictionary array: it interns each row's value again).
//!
//! A row group's dictionary holds the strings its rows use, in the order first used: a
//! key is mapped to its row-group index through a table per values array (one slot per
//! string of the profile), so a string is hashed once per row group and values array, not
//! once per row. Pages are Parquet format v1, zstd-compressed like the other columns: one
//! dictionary page (`PLAIN`), one data page (definition levels `RLE` for a nullable column,
//! then the indices as the RLE / bit-packed hybrid).

use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, StringArray};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use std::collections::HashMap;
use std::sync::Arc;

/// One string column of the open row group.
pub(super) struct KeyColumn {
    descr: ColumnDescPtr,
    /// The values array of the last batch and, per key, its row-group index (`u32::MAX`:
    /// not used yet in this row group).
    last: Option<(ArrayRef, Vec<u32>)>,
    /// The row group's strings, in the order first used, and their indices.
    index: HashMap<Box<str>, u32>,
    /// The dictionary page's values, `PLAIN`: 4-byte length, then the bytes.
    dictionary: Vec<u8>,
    /// Row-group index per non-null row.
    keys: Vec<u32>,
    /// Definition level per row (1: a value, 0: null), for a nullable column.
    defined: Vec<u32>,
    rows: usize,
}

fn error(what: &str) -> ParquetError {
    ParquetError::General(what.to_string())
}

impl KeyColumn {
    pub(super) fn new(descr: ColumnDescPtr) -> KeyColumn {
        KeyColumn {
            descr,
            last: None,
            index: HashMap::new(),
            dictionary: Vec::new(),
            keys: Vec::new(),
            defined: Vec::new(),
            rows: 0,
        }
    }

    /// Appends the rows of `column`, a dictionary array of `u32` keys into strings.
    pub(super) fn push(&mut self, column: &ArrayRef) -> Result<()> {
        let d = column
            .as_any()
            .downcast_ref::<DictionaryArray<UInt32Type>>()
            .ok_or_else(|| error("a string column is not a u32 dictionary array"))?;
        let strings = d
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| error("a dictionary's values are not strings"))?;
        if self
            .last
            .as_ref()
            .is_none_or(|(v, _)| !Arc::ptr_eq(v, d.values()))
        {
            self.last = Some((d.values().clone(), vec![u32::MAX; strings.len()]));
        }
        let nullable = self.descr.max_def_level() > 0;
        if d.null_count() > 0 && !nullable {
            return Err(error("a null in a required string column"));
        }
        let Some((_, local)) = self.last.as_mut() else {
            return Ok(());
        };
        self.keys.reserve(d.len());
        for i in 0..d.len() {
            if d.is_null(i) {
                self.defined.push(0);
                continue;
            }
            if nullable {
                self.defined.push(1);
            }
            let k = d.keys().value(i) as usize;
            let slot = local
                .get_mut(k)
                .ok_or_else(|| error("a dictionary key past its values"))?;
            if *slot == u32::MAX {
                *slot = intern(&mut self.index, &mut self.dictionary, strings.value(k))?;
            }
            self.keys.push(*slot);
        }
        self.rows += d.len();
        Ok(())
    }

    /// The column chunk (dictionary page, then data page) and its metadata, for
    /// `SerializedRowGroupWriter::append_column`.
    pub(super) fn finish(self, level: i32) -> Result<(Bytes, ColumnCloseResult)> {
        let strings = self.index.len();
        let width = bit_width(strings.saturating_sub(1) as u32);
        let mut data = Vec::with_capacity(self.keys.len() * width as usize / 8 + 64);
        if self.descr.max_def_level() > 0 {
            let mut levels = Vec::new();
            hybrid(&self.defined, 1, &mut levels);
            data.extend_from_slice(&(levels.len() as u32).to_le_bytes());
            data.extend_from_slice(&levels);
        }
        data.push(width as u8);
        hybrid(&self.keys, width, &mut data);

        let zstd = |raw: &[u8]| -> Result<Bytes> {
            zstd::bulk::compress(raw, level)
                .map(Bytes::from)
                .map_err(|e| ParquetError::External(Box::new(e)))
        };
        let mut sink = TrackedWrite::new(Vec::new());
        let (dict, page) = {
            let mut pages = SerializedPageWriter::new(&mut sink);
            let dict = pages.write_page(CompressedPage::new(
                Page::DictionaryPage {
                    buf: zstd(&self.dictionary)?,
                    num_values: strings as u32,
                    encoding: Encoding::PLAIN,
                    is_sorted: false,
                },
                self.dictionary.len(),
            ))?;
            let page = pages.write_page(CompressedPage::new(
                Page::DataPage {
                    buf: zstd(&data)?,
                    num_values: self.rows as u32,
                    encoding: Encoding::RLE_DICTIONARY,
                    def_level_encoding: Encoding::RLE,
                    rep_level_encoding: Encoding::RLE,
                    statistics: None,
                },
                data.len(),
            ))?;
            pages.close()?;
            (dict, page)
        };
        let bytes = Bytes::from(sink.into_inner()?);
        // Sizes include the page headers, as the column writer counts them.
        let header = |s: &parquet::column::page::PageWriteSpec| {
            (s.bytes_written - s.compressed_size as u64) as i64
        };
        let uncompressed = dict.uncompressed_size as i64
            + header(&dict)
            + page.uncompressed_size as i64
            + header(&page);
        let codec = Compression::ZSTD(ZstdLevel::try_new(level)?);
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(codec)
            .set_encodings_mask(EncodingMask::new_from_encodings(
                [Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY].iter(),
            ))
            .set_total_compressed_size(bytes.len() as i64)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(self.rows as i64)
            .set_dictionary_page_offset(Some(dict.offset as i64))
            .set_data_page_offset(page.offset as i64)
            .build()?;
        let offset_index = OffsetIndexMetaData {
            page_locations: vec![PageLocation {
                offset: page.offset as i64,
                compressed_page_size: page.bytes_written as i32,
                first_row_index: 0,
            }],
            unencoded_byte_array_data_bytes: None,
        };
        let close = ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: self.rows as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: Some(offset_index),
        };
        Ok((bytes, close))
    }
}

/// The row-group index of `s`, added to the dictionary if new.
fn intern(index: &mut HashMap<Box<str>, u32>, dictionary: &mut Vec<u8>, s: &str) -> Result<u32> {
    if let Some(&i) = index.get(s) {
        return Ok(i);
    }
    let i = index.len() as u32;
    let len = u32::try_from(s.len()).map_err(|_| error("a string longer than 4 GiB"))?;
    dictionary.extend_from_slice(&len.to_le_bytes());
    dictionary.extend_from_slice(s.as_bytes());
    index.insert(s.into(), i);
    Ok(i)
}

/// Bits needed for values up to `max`.
pub(super) fn bit_width(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// `values` (each below 2^`width`) in Parquet's RLE / bit-packed hybrid encoding, without
/// a length prefix: runs of at least eight equal values as RLE runs, the rest bit-packed in
/// groups of eight (the last group padded with zeros).
pub(super) fn hybrid(values: &[u32], width: u32, out: &mut Vec<u8>) {
    let mut literal = 0; // start of the values not yet written
    let mut i = 0;
    while i < values.len() {
        let mut j = i + 1;
        while j < values.len() && values[j] == values[i] {
            j += 1;
        }
        // Bit-packed groups hold eight values: the literals before a run are padded to
        // eight with the run's first values.
        let pad = (8 - (i - literal) % 8) % 8;
        if j - i >= pad + 8 {
            let start = i + pad;
            if start > literal {
                bit_packed(&values[literal..start], width, out);
            }
            varint(((j - start) as u64) << 1, out);
            let bytes = width.div_ceil(8) as usize;
            out.extend_from_slice(&values[i].to_le_bytes()[..bytes]);
            literal = j;
        }
        i = j;
    }
    if literal < values.len() {
        bit_packed(&values[literal..], width, out);
    }
}

/// One bit-packed run of `values` (padded to a multiple of eight with zeros).
fn bit_packed(values: &[u32], width: u32, out: &mut Vec<u8>) {
    let groups = values.len().div_ceil(8);
    varint(((groups as u64) << 1) | 1, out);
    let (mut acc, mut bits) = (0u64, 0u32);
    for k in 0..groups * 8 {
        acc |= (values.get(k).copied().unwrap_or(0) as u64) << bits;
        bits += width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hybrid_encoding_packs_literals_and_runs_as_the_parquet_spec_shows() {
        // The spec's bit-packing example: 0..=7 at width 3.
        let mut out = Vec::new();
        hybrid(&[0, 1, 2, 3, 4, 5, 6, 7], 3, &mut out);
        assert_eq!(out, [0x03, 0x88, 0xC6, 0xFA]);
        // 100 fives: one RLE run (header 100 << 1 as a varint, the value in one byte).
        out.clear();
        hybrid(&[5; 100], 3, &mut out);
        assert_eq!(out, [0xC8, 0x01, 0x05]);
        // Three literals then twelve sevens: the literals are padded to eight with five
        // sevens, the other seven sevens are too few for a run and end up bit-packed too,
        // padded with zeros.
        out.clear();
        let mut v = vec![1, 2, 3];
        v.extend([7; 12]);
        hybrid(&v, 3, &mut out);
        assert_eq!(out[0], (2 << 1) | 1, "{out:02x?}");
        assert_eq!(out.len(), 1 + 2 * 3);
        // Three literals then twenty sevens: eight literals (five sevens), then a run of 15.
        out.clear();
        let mut v = vec![1, 2, 3];
        v.extend([7; 20]);
        hybrid(&v, 3, &mut out);
        assert_eq!(&out[..1], [0x03]);
        assert_eq!(&out[4..], [15 << 1, 0x07]);
        // A dictionary of one string: width 0, runs carry no value bytes.
        out.clear();
        hybrid(&[0; 9], 0, &mut out);
        assert_eq!(out, [9 << 1]);
        assert_eq!(
            (bit_width(0), bit_width(1), bit_width(2), bit_width(255)),
            (0, 1, 2, 8)
        );
    }
}
