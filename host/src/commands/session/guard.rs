//! When a stopped core's open wait began: the start its guard holds. A zone writes nothing
//! when it opens; its guard (`ttprof_zone_t`, the runtime's `Zone`) keeps the wall clock's
//! low word in a register or on the stack until it closes. The kernel's DWARF says where the
//! guard declared on the wait's line lives at the stopped pc (`DW_AT_location`, a location
//! list of registers, pieces and frame-relative stack slots); the stopped core's registers
//! and memory give its value.
//!
//! Best effort, never a guess: a guard the optimiser left no location for at the pc, one
//! whose location needs the call frame's CFA or an entry value, or a runtime whose guard
//! holds no start (the timestamper's) gives `None`.

use gimli::{AttributeValue, EndianSlice, Evaluation, EvaluationResult, Location, RunTimeEndian};
use object::{Object, ObjectSection};

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// A stopped core as the DWARF expressions read it.
pub(super) struct Core<'a> {
    /// Its registers x0..x31 (DWARF registers 0..31 on RISC-V).
    pub(super) regs: [u32; 32],
    /// The 32-bit word at an address of its memory map (`None`: not readable).
    pub(super) word: &'a dyn Fn(u32) -> Option<u32>,
}

/// The `start` of the guard declared at `line` of a file `file` accepts, in scope at `pc` of
/// the kernel `elf`, as `core` holds it: the wall clock's low 32 bits when the zone opened.
pub(super) fn guard_start(
    elf: &[u8],
    pc: u32,
    file: &dyn Fn(&str) -> bool,
    line: u32,
    core: &Core,
) -> Option<u32> {
    let obj = object::File::parse(elf).ok()?;
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader<'_>, gimli::Error> {
        let data = obj
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(EndianSlice::new(data, endian))
    };
    let dwarf = gimli::Dwarf::load(load).ok()?;
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut found = Vec::new();
        let Ok(mut tree) = unit.entries_tree(None) else {
            continue;
        };
        let Ok(root) = tree.root() else { continue };
        let want = Want {
            pc: u64::from(pc),
            file,
            line,
        };
        if walk(&dwarf, &unit, root, &want, None, &mut found).is_err() {
            continue;
        }
        for (var, frame_base) in found {
            if let Some(v) = start_of(&dwarf, &unit, var, frame_base, pc, core) {
                return Some(v);
            }
        }
    }
    None
}

/// What is looked for: a variable declared at `file:line`, in scope at `pc`.
struct Want<'a> {
    pc: u64,
    file: &'a dyn Fn(&str) -> bool,
    line: u32,
}

/// Walks `node`'s children into the scopes containing the pc, collecting each variable
/// declared as wanted with the offset of its function (whose frame base it may use).
fn walk(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    node: gimli::EntriesTreeNode<'_, '_, '_, Reader<'_>>,
    want: &Want,
    function: Option<gimli::UnitOffset>,
    found: &mut Vec<(gimli::UnitOffset, Option<gimli::UnitOffset>)>,
) -> gimli::Result<()> {
    let mut children = node.children();
    while let Some(child) = children.next()? {
        let e = child.entry();
        let offset = e.offset();
        match e.tag() {
            gimli::DW_TAG_subprogram if contains(dwarf, unit, e, want.pc)? => {
                walk(dwarf, unit, child, want, Some(offset), found)?;
            }
            gimli::DW_TAG_inlined_subroutine | gimli::DW_TAG_lexical_block
                if contains(dwarf, unit, e, want.pc)? =>
            {
                walk(dwarf, unit, child, want, function, found)?;
            }
            gimli::DW_TAG_namespace
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_union_type
                if function.is_none() =>
            {
                walk(dwarf, unit, child, want, None, found)?;
            }
            gimli::DW_TAG_variable if function.is_some() && declared_at(dwarf, unit, e, want)? => {
                found.push((offset, function));
            }
            _ => {}
        }
    }
    Ok(())
}

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

/// The DIE itself, or for a concrete inlined copy its abstract origin (same unit), where
/// the declaration and type are.
fn origin(
    e: &gimli::DebuggingInformationEntry<'_, '_, Reader<'_>>,
) -> gimli::Result<Option<gimli::UnitOffset>> {
    Ok(match e.attr_value(gimli::DW_AT_abstract_origin)? {
        Some(AttributeValue::UnitRef(off)) => Some(off),
        Some(_) => None,
        None => Some(e.offset()),
    })
}

fn declared_at(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    e: &gimli::DebuggingInformationEntry<'_, '_, Reader<'_>>,
    want: &Want,
) -> gimli::Result<bool> {
    let Some(off) = origin(e)? else {
        return Ok(false);
    };
    let d = unit.entry(off)?;
    let file = match d.attr_value(gimli::DW_AT_decl_file)? {
        Some(AttributeValue::FileIndex(i)) => Some(i),
        Some(v) => v.udata_value(),
        None => None,
    };
    let line = d
        .attr_value(gimli::DW_AT_decl_line)?
        .and_then(|v| v.udata_value());
    let (Some(file), Some(line)) = (file, line) else {
        return Ok(false);
    };
    Ok(line == u64::from(want.line)
        && file_name(dwarf, unit, file).is_some_and(|name| (want.file)(&name)))
}

/// File `index` of the unit's line table, as `directory/name`.
fn file_name(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    index: u64,
) -> Option<String> {
    let header = unit.line_program.as_ref()?.header();
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

/// The guard variable `var`'s `start` at `pc`.
fn start_of(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    var: gimli::UnitOffset,
    function: Option<gimli::UnitOffset>,
    pc: u32,
    core: &Core,
) -> Option<u32> {
    let e = unit.entry(var).ok()?;
    let ty = unit
        .entry(origin(&e).ok()??)
        .ok()?
        .attr_value(gimli::DW_AT_type)
        .ok()??;
    let AttributeValue::UnitRef(ty) = ty else {
        return None;
    };
    let offset = member_offset(dwarf, unit, ty, "start", 0)?;
    let expr = location_at(dwarf, unit, e.attr_value(gimli::DW_AT_location).ok()??, pc)?;
    let frame_base = || {
        let f = unit.entry(function?).ok()?;
        let AttributeValue::Exprloc(fb) = f.attr_value(gimli::DW_AT_frame_base).ok()?? else {
            return None;
        };
        match evaluate(unit, fb, core, None)?.as_slice() {
            [p] => match p.location {
                Location::Register { register } => core.regs.get(register.0 as usize).copied(),
                Location::Address { address } => u32::try_from(address).ok(),
                _ => None,
            },
            _ => None,
        }
    };
    let pieces = evaluate(unit, expr, core, Some(&frame_base))?;
    word_at(&pieces, offset, core)
}

/// The expression of the location attribute `attr` that holds at `pc` (a single
/// expression, or the entry of a location list whose range holds the pc).
fn location_at<'a>(
    dwarf: &gimli::Dwarf<Reader<'a>>,
    unit: &gimli::Unit<Reader<'a>>,
    attr: AttributeValue<Reader<'a>>,
    pc: u32,
) -> Option<gimli::Expression<Reader<'a>>> {
    if let AttributeValue::Exprloc(e) = attr {
        return Some(e);
    }
    let mut list = dwarf.attr_locations(unit, attr).ok()??;
    while let Ok(Some(entry)) = list.next() {
        if entry.range.begin <= u64::from(pc) && u64::from(pc) < entry.range.end {
            return Some(entry.data);
        }
    }
    None
}

/// The byte offset of the 4-byte member `name` in type `ty`, looking through typedefs,
/// qualifiers and nested structures (`Zone { open: Open { start, .. }, .. }`).
fn member_offset(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    ty: gimli::UnitOffset,
    name: &str,
    depth: u32,
) -> Option<u64> {
    if depth > 4 {
        return None;
    }
    let e = unit.entry(ty).ok()?;
    let inner = || match e.attr_value(gimli::DW_AT_type).ok()?? {
        AttributeValue::UnitRef(t) => Some(t),
        _ => None,
    };
    match e.tag() {
        gimli::DW_TAG_typedef | gimli::DW_TAG_const_type | gimli::DW_TAG_volatile_type => {
            member_offset(dwarf, unit, inner()?, name, depth + 1)
        }
        gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => {
            let mut tree = unit.entries_tree(Some(ty)).ok()?;
            let root = tree.root().ok()?;
            let mut children = root.children();
            let mut members = Vec::new();
            while let Ok(Some(child)) = children.next() {
                let m = child.entry();
                if m.tag() != gimli::DW_TAG_member {
                    continue;
                }
                let at = m
                    .attr_value(gimli::DW_AT_data_member_location)
                    .ok()
                    .flatten()
                    .and_then(|v| v.udata_value())
                    .unwrap_or(0);
                let member_name = m
                    .attr_value(gimli::DW_AT_name)
                    .ok()
                    .flatten()
                    .and_then(|v| dwarf.attr_string(unit, v).ok())
                    .map(|n| n.to_string_lossy().into_owned());
                let member_ty = match m.attr_value(gimli::DW_AT_type).ok().flatten() {
                    Some(AttributeValue::UnitRef(t)) => Some(t),
                    _ => None,
                };
                members.push((member_name, at, member_ty));
            }
            if let Some((_, at, t)) = members.iter().find(|(n, ..)| n.as_deref() == Some(name)) {
                let size = unit
                    .entry((*t)?)
                    .ok()?
                    .attr_value(gimli::DW_AT_byte_size)
                    .ok()
                    .flatten()
                    .and_then(|v| v.udata_value());
                // Through a typedef the size is on the base type: accept it unsaid.
                return (size.is_none_or(|s| s == 4)).then_some(*at);
            }
            members.iter().find_map(|(_, at, t)| {
                member_offset(dwarf, unit, (*t)?, name, depth + 1).map(|inner| at + inner)
            })
        }
        _ => None,
    }
}

/// Evaluates `expr` on `core`; `frame_base` answers `DW_OP_fbreg` (`None`: refused).
fn evaluate<'a>(
    unit: &gimli::Unit<Reader<'a>>,
    expr: gimli::Expression<Reader<'a>>,
    core: &Core,
    frame_base: Option<&dyn Fn() -> Option<u32>>,
) -> Option<Vec<gimli::Piece<Reader<'a>>>> {
    let mut eval: Evaluation<Reader<'a>> = expr.evaluation(unit.encoding());
    // An expression that branches back on itself ends (a kernel's DWARF is not trusted).
    eval.set_max_iterations(4096);
    let mut step = eval.evaluate().ok()?;
    // Each request answered once; an expression is a few operations, so this ends quickly.
    for _ in 0..64 {
        step = match step {
            EvaluationResult::Complete => return Some(eval.result()),
            EvaluationResult::RequiresRegister { register, .. } => {
                let v = *core.regs.get(register.0 as usize)?;
                eval.resume_with_register(gimli::Value::Generic(u64::from(v)))
                    .ok()?
            }
            EvaluationResult::RequiresMemory {
                address, size: 4, ..
            } => {
                let v = (core.word)(u32::try_from(address).ok()?)?;
                eval.resume_with_memory(gimli::Value::Generic(u64::from(v)))
                    .ok()?
            }
            EvaluationResult::RequiresFrameBase => {
                let fb = frame_base?()?;
                eval.resume_with_frame_base(u64::from(fb)).ok()?
            }
            EvaluationResult::RequiresRelocatedAddress(a) => {
                eval.resume_with_relocated_address(a).ok()?
            }
            _ => return None,
        };
    }
    None
}

/// The 32-bit word at byte `offset` of the variable the pieces describe.
fn word_at(pieces: &[gimli::Piece<Reader<'_>>], offset: u64, core: &Core) -> Option<u32> {
    let read = |location: &Location<Reader<'_>>, within: u64| match *location {
        Location::Register { register } if within == 0 => {
            core.regs.get(register.0 as usize).copied()
        }
        Location::Address { address } => {
            (core.word)(u32::try_from(address.checked_add(within)?).ok()?)
        }
        Location::Value { value } if within == 0 => value
            .to_u64(u64::MAX)
            .ok()
            .and_then(|v| u32::try_from(v & 0xffff_ffff).ok()),
        _ => None,
    };
    if let [p] = pieces {
        if p.size_in_bits.is_none() {
            // The whole variable at one place.
            return read(&p.location, offset);
        }
    }
    let mut at = 0u64;
    for p in pieces {
        if p.bit_offset.is_some() {
            return None;
        }
        let bytes = p.size_in_bits? / 8;
        if offset >= at && offset + 4 <= at + bytes {
            return read(&p.location, offset - at);
        }
        at += bytes;
    }
    None
}
