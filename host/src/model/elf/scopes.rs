//! The local variables in scope at a pc, from a kernel's DWARF: which zone guards a stopped
//! core holds open. A guard (`let _w = wait!(..)`, `TTPROF_WAIT(..)`) is a local declared
//! on its macro's line, the line its site records, so a guard in scope at the pc, declared
//! at or before the line the pc's frame is at, is an open zone of that site.
//!
//! Best effort by nature: code built without DWARF, or whose scopes the optimiser merged,
//! yields nothing (the caller then says nothing), never a guess.

use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};

/// A local in scope at the pc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Local {
    /// Its declaration's file as the line table names it (directory and name).
    pub file: String,
    /// Its declaration's line.
    pub line: u32,
}

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// The locals of every frame (inlined ones too) in scope at `pc` in the ELF `elf`, each
/// declared at or before the line its frame is at: the pc's own line for the innermost
/// frame, the call's line for the frames around an inlined call.
pub fn in_scope(elf: &[u8], pc: u64) -> Vec<Local> {
    let Ok(file) = object::File::parse(elf) else {
        return Vec::new();
    };
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader<'_>, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(EndianSlice::new(data, endian))
    };
    let Ok(dwarf) = gimli::Dwarf::load(load) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut frames = Frames::default();
        if walk_unit(&dwarf, &unit, pc, &mut frames).is_ok() && !frames.stack.is_empty() {
            let pc_line = pc_line(&unit, pc);
            out.extend(frames.locals(pc_line));
        }
    }
    out
}

/// The frames entered on the way to the pc: per frame, the locals seen and the line of the
/// inlined call that leads to the next frame.
#[derive(Default)]
struct Frames {
    stack: Vec<Frame>,
}

#[derive(Default)]
struct Frame {
    locals: Vec<Local>,
    /// The line the next (inner) frame was called from (`DW_AT_call_line`).
    call_line: Option<u32>,
}

impl Frames {
    fn locals(self, pc_line: Option<u32>) -> Vec<Local> {
        let n = self.stack.len();
        let mut out = Vec::new();
        for (k, f) in self.stack.iter().enumerate() {
            // The innermost frame is at the pc's line, every other at its inlined call.
            let at = if k + 1 < n { f.call_line } else { pc_line };
            out.extend(
                f.locals
                    .iter()
                    .filter(|l| at.is_none_or(|at| l.line <= at))
                    .cloned(),
            );
        }
        out
    }
}

fn walk_unit(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    pc: u64,
    frames: &mut Frames,
) -> gimli::Result<()> {
    let mut tree = unit.entries_tree(None)?;
    let root = tree.root()?;
    walk(dwarf, unit, root, pc, None, frames)
}

/// Walks the children of `node`, whose locals belong to frame `frame` (`None`: outside
/// every function), into the one function, inlined call or block containing `pc`.
fn walk(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    node: gimli::EntriesTreeNode<'_, '_, '_, Reader<'_>>,
    pc: u64,
    frame: Option<usize>,
    frames: &mut Frames,
) -> gimli::Result<()> {
    let mut children = node.children();
    while let Some(child) = children.next()? {
        let e = child.entry();
        match e.tag() {
            gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine => {
                if !contains(dwarf, unit, e, pc)? {
                    continue;
                }
                if let (gimli::DW_TAG_inlined_subroutine, Some(k)) = (e.tag(), frame) {
                    frames.stack[k].call_line = udata(e, gimli::DW_AT_call_line).map(|l| l as u32);
                }
                frames.stack.push(Frame::default());
                let inner = frames.stack.len() - 1;
                walk(dwarf, unit, child, pc, Some(inner), frames)?;
            }
            gimli::DW_TAG_lexical_block if contains(dwarf, unit, e, pc)? => {
                walk(dwarf, unit, child, pc, frame, frames)?;
            }
            // Functions nest in namespaces (C++, Rust) and types (methods).
            gimli::DW_TAG_namespace
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_union_type
                if frame.is_none() =>
            {
                walk(dwarf, unit, child, pc, None, frames)?;
            }
            gimli::DW_TAG_variable => {
                if let Some(k) = frame {
                    if let Some(l) = declared(dwarf, unit, e)? {
                        frames.stack[k].locals.push(l);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether the DIE's code ranges contain `pc`.
fn contains(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    e: &gimli::DebuggingInformationEntry<'_, '_, Reader<'_>>,
    pc: u64,
) -> gimli::Result<bool> {
    let mut ranges = dwarf.die_ranges(unit, e)?;
    while let Some(r) = ranges.next()? {
        if r.begin <= pc && pc < r.end {
            return Ok(true);
        }
    }
    Ok(false)
}

fn udata(e: &gimli::DebuggingInformationEntry<'_, '_, Reader<'_>>, at: gimli::DwAt) -> Option<u64> {
    e.attr_value(at)
        .ok()
        .flatten()
        .and_then(|v| v.udata_value())
}

/// A variable's declaration (file, line), from its own attributes or, for a concrete
/// inlined copy, its abstract origin's (same unit).
fn declared(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    e: &gimli::DebuggingInformationEntry<'_, '_, Reader<'_>>,
) -> gimli::Result<Option<Local>> {
    let origin;
    let e = match e.attr_value(gimli::DW_AT_abstract_origin)? {
        Some(AttributeValue::UnitRef(off)) => {
            origin = unit.entry(off)?;
            &origin
        }
        Some(_) => return Ok(None),
        None => e,
    };
    // gimli gives a file attribute as a file index, whatever its form.
    let file = match e.attr_value(gimli::DW_AT_decl_file)? {
        Some(AttributeValue::FileIndex(i)) => Some(i),
        Some(v) => v.udata_value(),
        None => None,
    };
    let (Some(file), Some(line)) = (file, udata(e, gimli::DW_AT_decl_line)) else {
        return Ok(None);
    };
    let Some(name) = file_name(dwarf, unit, file) else {
        return Ok(None);
    };
    Ok(Some(Local {
        file: name,
        line: line as u32,
    }))
}

/// File `index` of the unit's line table, as `directory/name`.
fn file_name(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    index: u64,
) -> Option<String> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    let fe = header.file(index)?;
    let name = dwarf.attr_string(unit, fe.path_name()).ok()?;
    let name = name.to_string_lossy().into_owned();
    let dir = fe
        .directory(header)
        .and_then(|d| dwarf.attr_string(unit, d).ok())
        .map(|d| d.to_string_lossy().into_owned());
    Some(match dir {
        Some(d) if !name.starts_with('/') && !d.is_empty() => format!("{d}/{name}"),
        _ => name,
    })
}

/// The line of the row covering `pc` in the unit's line table.
fn pc_line(unit: &gimli::Unit<Reader<'_>>, pc: u64) -> Option<u32> {
    let program = unit.line_program.clone()?;
    let mut rows = program.rows();
    let mut last: Option<(u64, u32)> = None;
    while let Ok(Some((_, row))) = rows.next_row() {
        if row.end_sequence() {
            if let Some((a, l)) = last {
                if a <= pc && pc < row.address() {
                    return Some(l);
                }
            }
            last = None;
            continue;
        }
        if let Some((a, l)) = last {
            if a <= pc && pc < row.address() {
                return Some(l);
            }
        }
        last = Some((row.address(), row.line().map_or(0, |l| l.get() as u32)));
    }
    None
}
