"""LightRAG's graph editing routes: edit, create, merge and delete entities and relations.

Each edit is a curation record (docs/curation.md): it holds through later
indexing, and merges can be undone (``POST /graph/unmerge``). Edits take
their turn in the workspace's job queue and answer once committed, with
LightRAG's ``{status, message, data}``. Editable fields: an entity's
``description`` and ``entity_type`` (and ``entity_name`` with
``allow_rename``; onto an existing name only with ``allow_merge``), a
relation's ``description``, ``keywords`` and ``weight``; any other field is
a 400 naming them.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from fastapi import APIRouter, HTTPException
from pydantic import AliasChoices, BaseModel, Field, StringConstraints

from kgrag.api.facade import KGRag
from kgrag.errors import CurationError
from kgrag.server.deps import CurrentWorkspace, Workspace
from kgrag.server.jobs.queues import CurrentJobs, run_in_queue
from kgrag.server.views import JSONObject
from kgrag.server.views.graph import edge_view, node_view
from kgrag.storage.layout.typed import TypedGraph

router = APIRouter(prefix="/graph", tags=["graph"])

ENTITY_FIELDS = ("description", "entity_type")
RELATION_FIELDS = ("description", "keywords", "weight")
Name = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


def _fields(given: dict[str, Any], allowed: tuple[str, ...], what: str) -> dict[str, Any]:
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise HTTPException(
            400, f"cannot set {', '.join(unknown)} of {what}; settable: {', '.join(allowed)}"
        )
    return {k: v for k, v in given.items() if v is not None}


async def _entity(ws: Workspace, name: str) -> dict[str, object]:
    node = await TypedGraph(ws.rag.storage.graph).node(name)
    return node_view(name, node)["properties"] if node else {"entity_name": name}


async def _relation(ws: Workspace, src: str, tgt: str) -> dict[str, object]:
    edge = await TypedGraph(ws.rag.storage.graph).edge(src, tgt)
    return (
        edge_view((src, tgt), edge)["properties"] | {"src_id": src, "tgt_id": tgt} if edge else {}
    )


class EntityEdited(TypedDict):
    final: str  # the entity's name now
    merged: bool
    renamed: bool


class EntityEdit(BaseModel):
    entity_name: Name
    updated_data: dict[str, Any]
    allow_rename: bool = False
    allow_merge: bool = False


async def _edit_entity(
    rag: KGRag, body: EntityEdit, fields: dict[str, Any], new: str | None
) -> EntityEdited:
    name, merged = body.entity_name, False
    if fields:
        await rag.edit_entity(name, **fields)
    if new and new != name:
        if await rag.storage.graph.get_node(new) is not None:
            if not body.allow_merge:
                raise CurationError(
                    f"entity {new!r} exists; set allow_merge to merge {name!r} into it"
                )
            await rag.merge_entities(new, [name])
            merged = True
        else:
            await rag.rename_entity(name, new)
    return {"final": new or name, "merged": merged, "renamed": bool(new and new != name)}


@router.post("/entity/edit")
async def edit_entity(body: EntityEdit, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    data = dict(body.updated_data)
    new = data.pop("entity_name", None)
    if new is not None and new != body.entity_name and not body.allow_rename:
        raise HTTPException(400, "renaming needs allow_rename")
    fields = _fields(data, ENTITY_FIELDS, "an entity")
    done = await run_in_queue(
        jobs,
        ws.name,
        f"Editing entity {body.entity_name!r}",
        lambda rag: _edit_entity(rag, body, fields, new),
    )
    summary = {
        "merged": done["merged"],
        "merge_status": "success" if done["merged"] else "not_attempted",
        "merge_error": None,
        "operation_status": "success",
        "target_entity": new,
        "final_entity": done["final"],
        "renamed": done["renamed"],
    }
    message = (
        f"Entity merged successfully into '{done['final']}'"
        if done["merged"]
        else "Entity updated successfully"
    )
    return {
        "status": "success",
        "message": message,
        "data": await _entity(ws, done["final"]),
        "operation_summary": summary,
    }


class RelationEdit(BaseModel):
    source_id: Name = Field(validation_alias=AliasChoices("source_id", "source_entity"))
    target_id: Name = Field(validation_alias=AliasChoices("target_id", "target_entity"))
    updated_data: dict[str, Any]


@router.post("/relation/edit")
async def edit_relation(body: RelationEdit, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    fields = _fields(body.updated_data, RELATION_FIELDS, "a relation")

    async def act(rag: KGRag) -> JSONObject:
        await rag.edit_relation(body.source_id, body.target_id, **fields)
        return {}

    await run_in_queue(
        jobs, ws.name, f"Editing relation {body.source_id!r} - {body.target_id!r}", act
    )
    data = await _relation(ws, body.source_id, body.target_id)
    return {"status": "success", "message": "Relation updated successfully", "data": data}


class EntityCreate(BaseModel):
    entity_name: Name
    entity_data: dict[str, Any] = Field(default_factory=dict)


@router.post("/entity/create")
async def create_entity(body: EntityCreate, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    fields = _fields(body.entity_data, ENTITY_FIELDS, "an entity")

    async def act(rag: KGRag) -> JSONObject:
        await rag.create_entity(
            body.entity_name, str(fields.get("entity_type", "")), str(fields.get("description", ""))
        )
        return {}

    await run_in_queue(jobs, ws.name, f"Creating entity {body.entity_name!r}", act)
    message = f"Entity '{body.entity_name}' created successfully"
    return {"status": "success", "message": message, "data": await _entity(ws, body.entity_name)}


class RelationCreate(BaseModel):
    source_entity: Name
    target_entity: Name
    relation_data: dict[str, Any] = Field(default_factory=dict)


@router.post("/relation/create")
async def create_relation(
    body: RelationCreate, ws: CurrentWorkspace, jobs: CurrentJobs
) -> JSONObject:
    fields = _fields(body.relation_data, RELATION_FIELDS, "a relation")
    src, tgt = body.source_entity, body.target_entity

    async def act(rag: KGRag) -> JSONObject:
        await rag.create_relation(src, tgt, **fields)
        return {}

    await run_in_queue(jobs, ws.name, f"Creating relation {src!r} - {tgt!r}", act)
    message = f"Relation created successfully between '{src}' and '{tgt}'"
    return {"status": "success", "message": message, "data": await _relation(ws, src, tgt)}


class EntityMerge(BaseModel):
    entities_to_change: list[str] = Field(min_length=1, max_length=1000)
    entity_to_change_into: Name


@router.post("/entities/merge")
async def merge_entities(body: EntityMerge, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    into, sources = body.entity_to_change_into, body.entities_to_change

    async def act(rag: KGRag) -> JSONObject:
        return {"merge_id": await rag.merge_entities(into, sources)}

    done = await run_in_queue(jobs, ws.name, f"Merging {len(sources)} entities into {into!r}", act)
    data = {
        "merged_entity": into,
        "deleted_entities": sources,
        "merge_id": done["merge_id"],
        "entity": await _entity(ws, into),
    }
    return {
        "status": "success",
        "message": f"Successfully merged {len(sources)} entities into '{into}'",
        "data": data,
    }


class EntityDelete(BaseModel):
    entity_name: Name


class RelationDelete(BaseModel):
    source_entity: Name
    target_entity: Name


def _deleted(message: str) -> JSONObject:
    """LightRAG's DeletionResult shape."""
    return {
        "status": "success",
        "doc_id": "",
        "message": message,
        "status_code": 200,
        "file_path": None,
    }


@router.delete("/entity/delete")
async def delete_entity(body: EntityDelete, ws: CurrentWorkspace, jobs: CurrentJobs) -> JSONObject:
    async def act(rag: KGRag) -> JSONObject:
        await rag.delete_entity(body.entity_name)
        return {}

    await run_in_queue(jobs, ws.name, f"Deleting entity {body.entity_name!r}", act)
    return _deleted(f"Entity '{body.entity_name}' and its relationships have been deleted")


@router.delete("/relation/delete")
async def delete_relation(
    body: RelationDelete, ws: CurrentWorkspace, jobs: CurrentJobs
) -> JSONObject:
    src, tgt = body.source_entity, body.target_entity

    async def act(rag: KGRag) -> JSONObject:
        await rag.delete_relation(src, tgt)
        return {}

    await run_in_queue(jobs, ws.name, f"Deleting relation {src!r} - {tgt!r}", act)
    return _deleted(f"Relation from '{src}' to '{tgt}' has been deleted")
