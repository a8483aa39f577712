"""A small HTTP API written with FastAPI for Wharf's OpenAPI tests: path, query, header and
body parameters, enums, nested models, a list answer, a 404 and FastAPI's own 422, and an
`/admin` path no tool may reach. It serves its own OpenAPI 3.1 document at /openapi.json.

Every request that reaches it is appended, as received (method, raw path, query string, the
headers that matter), as one JSON line to the file named by PETS_REQUEST_LOG, so that a test can
see exactly what arrived. Run: `uvicorn pets_api:app --port PORT` in this directory.
"""

import json
import os
from enum import Enum
from typing import Annotated

from fastapi import FastAPI, Header, HTTPException, Path, Query, Request
from pydantic import BaseModel, Field, field_validator

app = FastAPI(title="Pets", version="1.0.0")
LOG = os.environ.get("PETS_REQUEST_LOG")


@app.middleware("http")
async def record(request: Request, call_next):
    if LOG:
        seen = {
            "method": request.method,
            "raw_path": request.scope.get("raw_path", b"").decode("latin-1"),
            "query": request.scope.get("query_string", b"").decode("latin-1"),
            "host": request.headers.get("host"),
            "x_api_key": request.headers.get("x-api-key"),
            "x_request_id": request.headers.get("x-request-id"),
        }
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps(seen) + "\n")
    return await call_next(request)


class Kind(str, Enum):
    cat = "cat"
    dog = "dog"


class Owner(BaseModel):
    name: str
    email: str | None = None


class NewPet(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    kind: Kind
    owner: Owner | None = None

    # What a schema does not say: FastAPI answers 422 for it.
    @field_validator("name")
    @classmethod
    def not_blank(cls, name: str) -> str:
        if not name.strip():
            raise ValueError("a pet's name cannot be blank")
        return name


class Pet(NewPet):
    id: int


PETS: dict[int, Pet] = {
    1: Pet(id=1, name="Rex", kind=Kind.dog, owner=Owner(name="Ada")),
    2: Pet(id=2, name="Tom", kind=Kind.cat),
}


@app.get("/pets", operation_id="listPets", summary="List the pets", tags=["pets"])
def list_pets(kind: Kind | None = None, limit: Annotated[int, Query(ge=1, le=100)] = 10) -> list[Pet]:
    pets = [pet for pet in PETS.values() if kind is None or pet.kind == kind]
    return pets[:limit]


@app.get("/pets/{pet_id}", operation_id="getPet", summary="One pet", tags=["pets"])
def get_pet(pet_id: Annotated[int, Path(ge=1)], x_request_id: Annotated[str | None, Header()] = None) -> Pet:
    if pet_id not in PETS:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")
    return PETS[pet_id]


@app.post("/pets", operation_id="createPet", summary="Add a pet", tags=["pets"], status_code=201)
def create_pet(pet: NewPet) -> Pet:
    made = Pet(id=max(PETS) + 1, **pet.model_dump())
    PETS[made.id] = made
    return made


@app.delete("/pets/{pet_id}", operation_id="deletePet", summary="Remove a pet", tags=["pets"], status_code=204)
def delete_pet(pet_id: int) -> None:
    if PETS.pop(pet_id, None) is None:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")


@app.get("/files/{name}", operation_id="readFile", summary="A file's name as received", tags=["files"])
def read_file(name: str) -> dict[str, str]:
    return {"name": name}


@app.get("/admin", include_in_schema=False)
def admin() -> dict[str, str]:
    return {"secret": "no tool may reach this"}
