"""The service's routes by audience; :func:`deniable.server._app.create_app` wires them.

* :mod:`~deniable.server._routes.devices`: what a device needs: the survey, posting responses;
* :mod:`~deniable.server._routes.analysts`: the results and the export of every response;
* :mod:`~deniable.server._routes.admin`: creating and closing surveys, invites;
* :mod:`~deniable.server._routes.pages`: the HTML pages, the API documentation and the static files;
* :mod:`~deniable.server._routes.gateway`: the Oblivious HTTP gateway (only with the ``ohttp`` extra and keys).

Each module's ``router(service)`` builds its routes over one
:class:`~deniable.server._routes.service.Service`.
"""
