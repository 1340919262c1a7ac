//! The counter service's unary `Add` (tonic) on one worker, until killed.
use eco_bench::counter::counter_server::{Counter, CounterServer};
use eco_bench::counter::{AddRequest, CountRequest, Value};
use std::sync::atomic::{AtomicI64, Ordering};
use tonic::{Request, Response, Status};

#[derive(Default)]
struct Service(AtomicI64);

#[tonic::async_trait]
impl Counter for Service {
    async fn add(&self, request: Request<AddRequest>) -> Result<Response<Value>, Status> {
        let by = request.into_inner().by;
        Ok(Response::new(Value {
            value: self.0.fetch_add(by, Ordering::Relaxed) + by,
        }))
    }

    type CountUpStream = tonic::codegen::BoxStream<Value>;

    async fn count_up(
        &self,
        _: Request<CountRequest>,
    ) -> Result<Response<Self::CountUpStream>, Status> {
        Err(Status::unimplemented("the bench calls Add only"))
    }
}

fn main() {
    eco_bench::one_worker_runtime().block_on(async {
        let addr = ([127, 0, 0, 1], eco_bench::port(3202)).into();
        tonic::transport::Server::builder()
            .add_service(CounterServer::new(Service::default()))
            .serve(addr)
            .await
            .unwrap();
    });
}
