//! A 3.0 document written for the test, with what real documents hold (shared and referenced
//! parameters, `$ref`s, `nullable`, `allOf`, a form body, a recursive schema, a deprecated
//! operation, two operations of one name), made into tools: every tool's schemas are checked
//! against the JSON Schema 2020-12 meta-schema, and each part is where the document puts it.

use serde_json::{Value, json};
use wharf_openapi::{BodyKind, OpenApiErrorKind, Place, operations};

fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Pet store", "version": "1"},
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List the pets",
                    "tags": ["pets"],
                    "parameters": [
                        {"$ref": "#/components/parameters/Limit"},
                        {"name": "kind", "in": "query", "schema": {"type": "string", "enum": ["cat", "dog"], "nullable": true}},
                        {"name": "Host", "in": "header", "schema": {"type": "string"}},
                        {"name": "Content-Type", "in": "header", "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "pets", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}}
                },
                "post": {
                    "operationId": "createPet",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"type": "object", "properties": {"tag": {"type": "string"}}}]}}}},
                    "responses": {"201": {"description": "made", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
                }
            },
            "/pets/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "description": "The pet's id", "schema": {"type": "integer", "minimum": 1}}],
                "get": {"operationId": "getPet", "responses": {"200": {"$ref": "#/components/responses/OnePet"}}},
                "delete": {"operationId": "deletePet", "deprecated": true, "responses": {"204": {"description": "gone"}}},
                "put": {
                    "parameters": [{"name": "id", "in": "query", "schema": {"type": "string"}}],
                    "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
                    "responses": {"200": {"description": "ok"}}
                }
            },
            "/trees": {"get": {"operationId": "getPet", "responses": {"200": {"description": "a tree", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}},
            "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object"}}}}, "responses": {"200": {"description": "ok"}}}}
        },
        "components": {
            "parameters": {"Limit": {"name": "limit", "in": "query", "description": "How many", "schema": {"type": "integer", "maximum": 100, "exclusiveMaximum": true}}},
            "responses": {"OnePet": {"description": "the pet", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
            "schemas": {
                "NewPet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "example": "Rex"}}},
                "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"type": "object", "properties": {"id": {"type": "integer"}}}], "type": "object"},
                "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
            }
        }
    })
}

#[test]
fn every_operation_becomes_a_tool_whose_schemas_are_2020_12() {
    let read = operations(&document()).unwrap();
    let names: Vec<&str> = read.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["listPets", "createPet", "getPet", "put_pets_id", "deletePet", "getPet_2"]);
    assert!(
        read.notes.iter().any(|note| note.contains("POST /upload") && note.contains("multipart")),
        "{:?}",
        read.notes
    );
    assert!(read.notes.iter().any(|note| note.contains("`getPet`") && note.contains("getPet_2")), "{:?}", read.notes);
    for tool in &read.tools {
        let input = Value::Object(tool.input_schema.clone());
        wharf_schema::meta::validate(&input, wharf_schema::Draft::Draft202012)
            .unwrap_or_else(|err| panic!("{}: {err}: {input}", tool.name));
        wharf_schema::Validator::new(&input).unwrap_or_else(|err| panic!("{}: {err}", tool.name));
        if let Some(output) = &tool.output_schema {
            wharf_schema::meta::validate(&Value::Object(output.clone()), wharf_schema::Draft::Draft202012).unwrap();
        }
    }
}

#[test]
fn parameters_and_bodies_are_arguments_placed_as_the_document_says() {
    let read = operations(&document()).unwrap();
    let tool = |name: &str| read.tools.iter().find(|tool| tool.name == name).unwrap();

    let list = tool("listPets");
    assert_eq!(list.method, "GET");
    assert_eq!(list.description.as_deref(), Some("List the pets"));
    assert_eq!(list.tags, ["pets"]);
    assert_eq!(
        list.input_schema["properties"]["limit"],
        json!({"type": "integer", "exclusiveMaximum": 100, "description": "How many"})
    );
    assert_eq!(
        list.input_schema["properties"]["kind"],
        json!({"type": ["string", "null"], "enum": ["cat", "dog", null]})
    );
    assert!(list.input_schema.get("required").is_none());
    // Headers that frame the request, or that OpenAPI says to ignore, are no arguments.
    let arguments: Vec<&String> = list.input_schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(arguments, ["kind", "limit"]);
    assert_eq!(list.output_schema, None, "an array is not an output schema");
    assert_eq!(list.annotations.read_only_hint, Some(true));

    let create = tool("createPet");
    let body = create.body.as_ref().unwrap();
    assert_eq!(
        (body.kind, body.argument.as_str(), body.media_type.as_str()),
        (BodyKind::Json, "body", "application/json")
    );
    assert_eq!(create.input_schema["required"], json!(["body"]));
    let body = &create.input_schema["properties"]["body"]["allOf"][0];
    assert_eq!(body["properties"]["name"], json!({"type": "string", "examples": ["Rex"]}));
    assert_eq!(create.output_schema.as_ref().unwrap()["type"], "object");
    assert_eq!(create.annotations.read_only_hint, Some(false));
    assert_eq!(create.annotations.destructive_hint, Some(false));

    let get = tool("getPet");
    assert_eq!(get.parameters[0].place, Place::Path);
    assert_eq!(get.input_schema["required"], json!(["id"]));
    assert_eq!(get.input_schema["properties"]["id"]["description"], "The pet's id");
    assert!(get.output_schema.is_some(), "through a referenced response");

    // A path and a query parameter of one name: the later is named by its place.
    let put = tool("put_pets_id");
    let arguments: Vec<(&str, &str, Place)> =
        put.parameters.iter().map(|p| (p.argument.as_str(), p.name.as_str(), p.place)).collect();
    assert_eq!(arguments, [("id", "id", Place::Query), ("path_id", "id", Place::Path)]);
    assert_eq!(put.body.as_ref().map(|body| body.kind), Some(BodyKind::Form));
    assert_eq!(put.annotations.idempotent_hint, Some(true));

    let delete = tool("deletePet");
    assert!(delete.deprecated);
    assert_eq!(delete.annotations.destructive_hint, Some(true));

    let tree = tool("getPet_2");
    let output = tree.output_schema.as_ref().unwrap();
    assert_eq!(output["$defs"]["Node"]["properties"]["children"]["items"], json!({"$ref": "#/$defs/Node"}));
}

#[test]
fn a_document_that_is_not_openapi_3_is_refused() {
    let err = operations(&json!({"swagger": "2.0"})).unwrap_err();
    assert_eq!(err.kind(), OpenApiErrorKind::NotOpenApi);
    assert!(err.to_string().contains("not OpenAPI 3.0 or 3.1"), "{err}");
}
