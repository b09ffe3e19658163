"""Worked examples shown to the model in the extraction prompts.

They are kept as records, not text, so the same examples render in either
format and double as round-trip fixtures for the parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgrag.types import ExtractedEntity as E
from kgrag.types import ExtractedRelation as R


@dataclass(frozen=True)
class Example:
    text: str
    entity_types: tuple[str, ...]
    entities: tuple[E, ...]
    relations: tuple[R, ...]


WORKSHOP = Example(
    text=(
        "In March 1843 the inventor Ada Byrne left the Halden Works in Leeds to join the "
        "Royal Society of Engineers, where she presented her design for a steam-driven loom."
    ),
    entity_types=("Person", "Organization", "Location", "Event", "Artifact"),
    entities=(
        E(
            "Ada Byrne",
            "Person",
            "Ada Byrne is an inventor who left the Halden Works in March "
            "1843, joined the Royal Society of Engineers and presented a design for a steam-driven loom.",
        ),
        E(
            "Halden Works",
            "Organization",
            "The Halden Works is an establishment in Leeds where "
            "Ada Byrne worked until March 1843.",
        ),
        E("Leeds", "Location", "Leeds is the town in which the Halden Works is located."),
        E(
            "Royal Society of Engineers",
            "Organization",
            "The Royal Society of Engineers is a "
            "society that Ada Byrne joined in 1843 and to which she presented her loom design.",
        ),
        E(
            "Steam-Driven Loom",
            "Artifact",
            "The steam-driven loom is a machine designed by "
            "Ada Byrne and presented to the Royal Society of Engineers.",
        ),
    ),
    relations=(
        R(
            "Ada Byrne",
            "Halden Works",
            "former workplace, departure",
            "Ada Byrne left the Halden Works in March 1843.",
        ),
        R("Halden Works", "Leeds", "location", "The Halden Works is situated in Leeds."),
        R(
            "Ada Byrne",
            "Royal Society of Engineers",
            "membership, presentation",
            "Ada Byrne joined the Royal Society of Engineers and presented her loom design there.",
        ),
        R(
            "Ada Byrne",
            "Steam-Driven Loom",
            "invention, design",
            "Ada Byrne is the designer of the steam-driven loom.",
        ),
    ),
)

SENSOR = Example(
    text=(
        "The Lumen-7 probe measures soil moisture every ten minutes and sends its readings "
        "over LoRaWAN to the FieldHub gateway, which keeps them in a time-series database."
    ),
    entity_types=("Artifact", "Method", "Data", "Concept"),
    entities=(
        E(
            "Lumen-7",
            "Artifact",
            "Lumen-7 is a probe that measures soil moisture every ten "
            "minutes and transmits its readings over LoRaWAN.",
        ),
        E(
            "Soil Moisture",
            "Data",
            "Soil moisture is the quantity the Lumen-7 probe measures every ten minutes.",
        ),
        E(
            "LoRaWAN",
            "Method",
            "LoRaWAN is the wireless protocol the Lumen-7 probe uses to send "
            "readings to the FieldHub gateway.",
        ),
        E(
            "FieldHub",
            "Artifact",
            "FieldHub is a gateway that receives the Lumen-7 readings and "
            "keeps them in a time-series database.",
        ),
        E(
            "Time-Series Database",
            "Artifact",
            "The time-series database is where the FieldHub "
            "gateway keeps the soil moisture readings.",
        ),
    ),
    relations=(
        R(
            "Lumen-7",
            "Soil Moisture",
            "measurement, sampling interval",
            "The Lumen-7 probe measures soil moisture every ten minutes.",
        ),
        R(
            "Lumen-7",
            "FieldHub",
            "data transmission, wireless link",
            "The Lumen-7 probe sends its readings to the FieldHub gateway over LoRaWAN.",
        ),
        R(
            "Lumen-7",
            "LoRaWAN",
            "communication protocol",
            "The Lumen-7 probe uses LoRaWAN to transmit its readings.",
        ),
        R(
            "FieldHub",
            "Time-Series Database",
            "data storage",
            "The FieldHub gateway keeps the readings it receives in a time-series database.",
        ),
    ),
)

EXAMPLES: tuple[Example, ...] = (WORKSHOP, SENSOR)
