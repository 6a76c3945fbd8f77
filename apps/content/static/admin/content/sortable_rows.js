"use strict";
// Drag-and-drop inlines (django-admin-sortable2) in the content admin: new rows join the order too.
{
    // A new row gets the drag handle of saved rows, so it can be dropped where it belongs before the
    // first save; the library numbers every row that has a handle whenever one is dropped.
    const makeDraggable = (row) => {
        const cell = row.matches("tr") ? row.querySelector("td.original") : null;
        if (cell && !cell.querySelector("p")) {
            const handle = document.createElement("p");
            handle.textContent = "New: drag to place";
            cell.prepend(handle);
        }
        row.classList.add("has_original");
    };

    const rowsOf = (fieldset) => Array.from(fieldset.querySelectorAll("tr.form-row, .inline-related"))
        .filter((row) => !row.classList.contains("empty-form") && !row.id.endsWith("-empty"));

    const placeOf = (row) => {
        const input = row.querySelector("input._reorder_");
        const value = input ? parseInt(input.value, 10) : NaN;
        return Number.isNaN(value) ? Infinity : value;
    };

    // A page sent back with errors shows the rows in the order they were dragged to, which is the order
    // a save keeps: their hidden position inputs carry it, the order of the forms does not.
    const showDroppedOrder = (fieldset) => {
        const rows = rowsOf(fieldset);
        if (rows.length < 2) {
            return;
        }
        const sorted = rows.map((row, index) => ({row, index, place: placeOf(row)}))
            .sort((a, b) => a.place - b.place || a.index - b.index);
        if (sorted.every((item, index) => item.index === index)) {
            return;
        }
        const parent = rows[0].parentElement;
        const anchor = rows[rows.length - 1].nextElementSibling;
        for (const {row} of sorted) {
            // A row's own error line, just above it, moves with it.
            const errors = row.previousElementSibling;
            if (errors && errors.classList.contains("row-form-errors")) {
                parent.insertBefore(errors, anchor);
            }
            parent.insertBefore(row, anchor);
        }
    };

    document.addEventListener("formset:added", (event) => {
        if (event.target instanceof HTMLElement && event.target.closest("fieldset.sortable")) {
            makeDraggable(event.target);
        }
    });

    window.addEventListener("DOMContentLoaded", () => {
        for (const fieldset of document.querySelectorAll("fieldset.sortable")) {
            // New rows sent back with errors: draggable like the saved ones.
            rowsOf(fieldset).filter((row) => !row.classList.contains("has_original")).forEach(makeDraggable);
            if (document.querySelector(".errornote")) {
                showDroppedOrder(fieldset);
            }
        }
    });
}
